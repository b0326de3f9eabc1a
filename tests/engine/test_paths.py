"""The path rule for what clients may name: escapes refused, nothing about the file revealed."""

from __future__ import annotations

import os

import pytest

from snarkd.engine import KeyStore, PermissionDenied
from snarkd.engine.paths import ClientPaths, PathRule


@pytest.fixture
def tree(tmp_path):
    root, other, out = tmp_path / "keys", tmp_path / "more", tmp_path / "outside"
    for d in (root, other, out, root / "sub"):
        d.mkdir()
    (root / "a.zkey").write_bytes(b"zkey")
    (out / "secret").write_text("root:x:0:0")
    (root / "link-out").symlink_to(out / "secret")
    (root / "dir-out").symlink_to(out)
    (root / "link-in").symlink_to(root / "a.zkey")
    (out / "link-back").symlink_to(root / "a.zkey")
    return root, other, out


def test_inside_paths_resolve(tree):
    root, other, out = tree
    rule = PathRule([root, other], "the roots")
    assert rule.resolve("a.zkey", "key") == root / "a.zkey"
    assert rule.resolve(str(root / "sub" / ".." / "a.zkey"), "key") == root / "a.zkey"
    assert rule.resolve("link-in", "key") == root / "a.zkey"  # a symlink that stays inside
    assert rule.resolve(str(other / "new.zkey"), "key") == other / "new.zkey"  # existence is the loader's business
    assert rule.resolve(str(out / "link-back"), "key") == root / "a.zkey"  # judged by where it leads


@pytest.mark.parametrize("name", ["../outside/secret", "/etc/shadow", "link-out", "dir-out/secret", "sub/../../outside",
                                  "/", "..", "", "a.zkey\0x"])
def test_escapes_are_refused_without_a_word_about_the_file(tree, name):
    root, other, out = tree
    rule = PathRule([root, other], "[keys] param_cache or [keys] allowed_dirs")
    with pytest.raises(PermissionDenied) as e:
        rule.resolve(name, "key 'k' path")
    msg = str(e.value)
    assert "root:x" not in msg and "no such file" not in msg.lower() and "not a zkey" not in msg
    if name and "\0" not in name:
        assert "[keys] param_cache or [keys] allowed_dirs" in msg and "not opened" in msg


def test_existing_and_missing_outside_paths_read_the_same(tree):
    root, other, out = tree
    rule = PathRule([root], "rule")
    msgs = []
    for p in (out / "secret", out / "absent"):
        with pytest.raises(PermissionDenied) as e:
            rule.resolve(str(p), "key")
        msgs.append(str(e.value).replace(f"/{p.name}'", "/NAME'"))
    assert msgs[0] == msgs[1]


def test_a_prefix_is_not_a_parent(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys-evil").mkdir()
    with pytest.raises(PermissionDenied):
        PathRule([tmp_path / "keys"], "rule").resolve(str(tmp_path / "keys-evil" / "x"), "key")


def test_keystore_confines_client_paths_not_the_config(tree):
    root, other, out = tree
    ks = KeyStore(str(root), wasm_cache="off", rule=ClientPaths(str(root), [str(other)]).keys)
    for p in ("/etc/shadow", str(out / "secret"), "link-out"):
        with pytest.raises(PermissionDenied):
            ks.load("k", p)
    with pytest.raises(PermissionDenied, match="wasm path"):
        ks.load("k", "a.zkey", wasm=str(out / "secret"))
    # a preloaded key (from the operator's config) is not confined: it fails on its content instead
    with pytest.raises(Exception) as e:
        ks.load("k", str(out / "secret"), preloaded=True)
    assert not isinstance(e.value, PermissionDenied)
    # embedded use (no allowed_dirs): no rule
    assert KeyStore(str(root)).rule is None and os.path.exists(out / "secret")


@pytest.fixture(params=["single daemon", "cluster front"])
def daemon_paths(request, tree, tmp_path):
    """The key store and the witness rule as a daemon builds them from its config (Server, or the cluster
    front's make()), with [keys] param_cache = keys, allowed_dirs = [more], witness_dirs = [more]."""
    from snarkd.config import Config
    from snarkd.engine.paths import ClientPaths

    root, other, out = tree
    text = (f'[keys]\nparam_cache = "{root}"\nallowed_dirs = ["{other}"]\n'
            f'[transport]\nwitness_spool = "{tmp_path}/spool"\nwitness_dirs = ["{other}"]\n')
    if request.param == "single daemon":
        from snarkd.daemon.server import make_engine

        cfg = Config.from_text(text, str(tmp_path / "c.toml"), tmp_path, env={})
        keys = make_engine(cfg).keys
    else:
        pytest.importorskip("ray", reason="the cluster extra is not installed")
        from snarkd.cluster import make

        cfg = Config.from_text(text + '[cluster]\naddress = "local"\n', str(tmp_path / "c.toml"), tmp_path, env={})
        keys = make(cfg)[1]
    return keys, ClientPaths.from_config(cfg).witnesses


@pytest.mark.parametrize("name", ["/etc/shadow", "../outside/secret", "link-out", "dir-out/secret", "sub/../../outside"])
def test_a_daemon_and_a_cluster_front_confine_key_paths_alike(daemon_paths, tree, name):
    keys, _ = daemon_paths
    with pytest.raises(PermissionDenied) as e:
        keys.load("k", name)
    assert "[keys] param_cache or [keys] allowed_dirs" in str(e.value) and "root:x" not in str(e.value)
    with pytest.raises(PermissionDenied, match="wasm path"):
        keys.load("k", "a.zkey", wasm=name)
    with pytest.raises(Exception) as inside:  # inside the rule: opened, and refused for what it is (not a zkey)
        keys.load("k", "a.zkey")
    assert not isinstance(inside.value, PermissionDenied) and "a.zkey" in str(inside.value)


def test_witness_paths_resolve_by_the_rule_and_never_against_the_working_directory(daemon_paths, tree, monkeypatch):
    _, rule = daemon_paths
    root, other, out = tree
    (other / "w.wtns").write_bytes(b"w")
    assert rule.resolve(str(other / "w.wtns"), "witness path") == other / "w.wtns"
    monkeypatch.chdir(other)  # a relative path would once have resolved here, against the daemon's working directory
    for name in ("w.wtns", "./w.wtns", str(out / "secret"), str(root / "a.zkey"), "/etc/passwd"):
        with pytest.raises(PermissionDenied) as e:
            rule.resolve(name, "witness path")
        assert "[transport] witness_spool or witness_dirs" in str(e.value)
