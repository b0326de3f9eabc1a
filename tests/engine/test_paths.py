"""The path rule for what clients may name: escapes refused, nothing about the file revealed."""

from __future__ import annotations

import os

import pytest

from snarkd.engine import KeyStore, PermissionDenied
from snarkd.engine.paths import PathRule


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
    ks = KeyStore(str(root), wasm_cache="off", allowed_dirs=[str(other)])
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
