"""Who may talk to the daemon: TLS, mutual TLS, bearer tokens with roles, the control socket."""

from __future__ import annotations

import json
import ssl
import stat
import urllib.error
import urllib.request

import grpc
import pytest
from certs import Ca
from daemon_helpers import Setup, free_port, parse_started, port_free, snarkd

import oracle
from snarkd.daemon.client import Client, RemoteDaemonError, RemoteInputError
from snarkd.daemon.security import TokenTable
from snarkd.errors import DaemonError
from snarkd.verifier import verify

PROVE_TOKEN = "p-" + "1" * 30
ADMIN_TOKEN = "a-" + "2" * 30


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def write_tokens(d, mode=0o600):
    path = d / "tokens"
    path.write_text(f"# name role token\nalice prove {PROVE_TOKEN}\nbob prove p-{'3' * 30}\n"
                    f"ops admin {ADMIN_TOKEN}\n")
    path.chmod(mode)
    (d / "alice.token").write_text(PROVE_TOKEN + "\n")
    (d / "ops.token").write_text(ADMIN_TOKEN + "\n")
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = Ca.make(d, "server-ca")
    server = ca.issue(d, "server", server=True)
    clients_ca = Ca.make(d, "clients-ca")
    client = clients_ca.issue(d, "client", server=False)
    stranger = Ca.make(d, "other-ca").issue(d, "stranger", server=False)
    return {"ca": ca.path, "server": server, "clients_ca": clients_ca.path, "client": client, "stranger": stranger}


def tls_config(s: Setup, pki, *, tokens=True, mtls=False, status=False, preload=None, name="snarkd.toml"):
    cert, key = pki["server"]
    extra = [f'tls_cert = "{cert}"', f'tls_key = "{key}"']
    if mtls:
        extra.append(f'tls_client_ca = "{pki["clients_ca"]}"')
    if tokens:
        extra.append(f'token_file = "{write_tokens(s.dir)}"')
    if status:
        s.status_port = free_port()
        extra.append(f'status_listen = "127.0.0.1:{s.status_port}"')
    cfg = s.write(drain="5s", preload=preload, name=name)
    text = cfg.read_text().replace("[transport]", "\n".join(extra) + "\n[transport]")
    cfg.write_text(text)
    return cfg


def start(cfg, reaper):
    r = snarkd("start", "--config", cfg, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    info = parse_started(r.stdout)
    reaper.pids.append(info["pid"])
    return info


# ------------------------------------------------------------------ refusals at start


@pytest.mark.parametrize("setting, value", [("listen", "0.0.0.0:{port}"), ("status_listen", "0.0.0.0:{port}")])
def test_non_loopback_without_tls_refuses_to_start(setup, setting, value):
    port = free_port()
    cfg = setup.write()
    text = cfg.read_text()
    line = f'{setting} = "{value.format(port=port)}"'
    text = text.replace(f'listen = "{setup.addr}"', line) if setting == "listen" else \
        text.replace("[transport]", line + "\n[transport]")
    cfg.write_text(text)
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"[daemon] {setting}" in r.stderr and "needs TLS" in r.stderr and "set [daemon] tls_cert and tls_key" in r.stderr
    assert not setup.pid_file.exists() and port_free(port) and port_free(setup.port)


def test_tls_settings_go_together(setup, pki):
    cfg = setup.write()
    cfg.write_text(cfg.read_text().replace("[transport]", f'tls_cert = "{pki["server"][0]}"\n[transport]'))
    r = snarkd("config", "show", "--config", cfg)
    assert r.returncode == 3 and "tls_cert and tls_key go together" in r.stderr, r.stderr


def test_world_readable_token_file_refused(setup, pki, reaper):
    cfg = tls_config(setup, pki)
    (setup.dir / "tokens").chmod(0o644)
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 5 and "accessible to other users (mode 0644): chmod 600" in r.stderr, r.stderr
    assert not setup.pid_file.exists() and port_free(setup.port)


def test_token_table_rules(tmp_path):
    path = write_tokens(tmp_path)
    t = TokenTable.load(str(path))
    assert t.lookup(PROVE_TOKEN).name == "alice" and not t.lookup(PROVE_TOKEN).may("admin")
    assert t.lookup(ADMIN_TOKEN).may("admin") and t.lookup(ADMIN_TOKEN).may("prove")
    assert t.lookup(PROVE_TOKEN[:-1]) is None and t.lookup("") is None
    for body, needle in [("alice prove short", "shorter than 16"), ("alice root " + "x" * 20, "role 'root'"),
                         ("alice prove", "NAME ROLE TOKEN"), ("# nothing", "holds no token"),
                         (f"a prove {'x' * 20}\nb admin {'x' * 20}", "appears twice")]:
        path.write_text(body + "\n")
        with pytest.raises(DaemonError, match=needle.replace("(", r"\(")):
            TokenTable.load(str(path))


# ------------------------------------------------------------------ TLS + tokens


def test_tls_with_tokens(setup, pki, reaper, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    cfg = tls_config(setup, pki, status=True, preload={"chain": circ.zkey})
    cfg.write_text(cfg.read_text() + f'[keys]\nallowed_dirs = ["{circ.zkey.parent}"]\n')
    info = start(cfg, reaper)
    # `snarkd start` checked health and the fingerprint through the control socket (0600); status works too
    ctl = setup.pid_file.with_suffix(".ctl")
    assert stat.S_IMODE(ctl.stat().st_mode) == 0o600
    r = snarkd("status", "--json", "--config", cfg)
    assert r.returncode == 0 and json.loads(r.stdout)["pid"] == info["pid"], r.stderr
    ca = str(pki["ca"])
    data = wtns.read_bytes()
    with Client(setup.addr, timeout=30) as c:  # plaintext to a TLS port: no connection
        with pytest.raises(RemoteDaemonError) as e:
            c.status(timeout=5)
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
    with Client(setup.addr, timeout=30, tls_ca=ca) as c:
        assert c.health() == "SERVING"  # health answers everyone
        for call in (lambda: c.prove("chain", data), c.status, lambda: c.await_("x")):
            with pytest.raises(RemoteDaemonError) as e:
                call()
            assert e.value.code == grpc.StatusCode.UNAUTHENTICATED and "bearer token" in str(e.value)
    with Client(setup.addr, timeout=30, tls_ca=ca, token="p-" + "9" * 30) as c:
        with pytest.raises(RemoteDaemonError) as e:
            c.status()
        assert e.value.code == grpc.StatusCode.UNAUTHENTICATED and "not one of this daemon's tokens" in str(e.value)
    with Client(setup.addr, timeout=60, tls_ca=ca, token_file=str(setup.dir / "alice.token")) as alice, \
            Client(setup.addr, timeout=60, tls_ca=ca, token="p-" + "3" * 30) as bob, \
            Client(setup.addr, timeout=60, tls_ca=ca, token_file=str(setup.dir / "ops.token")) as ops:
        reply = alice.prove("chain", data)
        assert verify(json.loads(circ.vk.read_text()), reply.public, reply.proof)
        with pytest.raises(RemoteInputError) as e:  # prove role: no keys
            alice.load_key("again", str(circ.zkey))
        assert e.value.code == grpc.StatusCode.PERMISSION_DENIED and "lacks the admin role" in str(e.value)
        with pytest.raises(RemoteInputError) as e:
            alice.unload_key("chain")
        assert e.value.code == grpc.StatusCode.PERMISSION_DENIED
        assert ops.load_key("again", str(circ.zkey))["id"] == "again"
        assert ops.unload_key("again")["id"] == "again"
        # a job belongs to its token: to another prove token it does not exist (the same NOT_FOUND as an unknown
        # id, so ids cannot be probed); admin can await it
        job = alice.submit("chain", data)
        with pytest.raises(RemoteInputError) as unknown:
            bob.await_("no-such-job")
        for call in (lambda: bob.await_(job), lambda: bob.cancel(job), lambda: bob.aggregate("chain", job_ids=[job] * 2)):
            with pytest.raises(RemoteInputError) as e:
                call()
            assert e.value.code == grpc.StatusCode.NOT_FOUND
            assert str(e.value).replace(job, "ID") == str(unknown.value).replace("no-such-job", "ID")
        assert ops.await_(job).state == "COMPLETED" and alice.await_(job).state == "COMPLETED"
        # job ids are per token: bob may name a job as alice did (no ALREADY_EXISTS telling him hers exists);
        # ListJobs shows each token its own, admin everyone's with their owner
        assert alice.submit("chain", data, job_id="mine") == bob.submit("chain", data, job_id="mine") == "mine"
        assert alice.await_("mine").state == bob.await_("mine").state == "COMPLETED"
        assert {j["job_id"] for j in bob.list_jobs()} == {"mine"}
        assert {j["job_id"] for j in alice.list_jobs()} == {"mine", job, reply.job_id}
        assert sorted(j["client"] for j in ops.list_jobs() if j["job_id"] == "mine") == ["alice", "bob"]
        # errors name paths relative to the key directories for a prover, in full for admin (issue 33, finding 6)
        pairs = [(reply.public, reply.proof)] * 2
        missing = circ.zkey.parent / "missing.srs"
        with pytest.raises(RemoteInputError) as e:
            alice.aggregate("chain", proofs=pairs, srs_path=str(missing))
        assert "missing.srs" in str(e.value) and str(circ.zkey.parent) not in str(e.value), str(e.value)
        with pytest.raises(RemoteInputError) as e:
            ops.aggregate("chain", proofs=pairs, srs_path=str(missing))
        assert str(missing) in str(e.value)
        # Status: a prover sees what a prover needs (keys without paths, the spool), not the daemon's insides
        seen, full = alice.status(), ops.status()
        assert full["pid"] == info["pid"] and full["config_path"] and full["keys"][0]["path"]
        assert seen["pid"] == 0 and not seen["config_path"] and not seen["listen"] and not seen["engine_json"]
        assert seen["keys"][0]["id"] == "chain" and not seen["keys"][0]["path"] and seen["keys"][0]["n_vars"]
        assert seen["witness_spool"] == full["witness_spool"] and seen["state"] == "serving"
    # the command line: --tls-ca and --token-file
    out = tmp_path / "p.json", tmp_path / "pub.json"
    r = snarkd("prove", "--addr", setup.addr, "--key", "chain", "--tls-ca", ca, "--token-file",
               setup.dir / "alice.token", wtns, *out)
    assert r.returncode == 0, r.stderr
    assert oracle.snarkjs_verify(circ.vk, out[1], out[0])
    r = snarkd("prove", "--addr", setup.addr, "--key", "chain", "--tls-ca", ca, wtns, *out)
    assert r.returncode == 5 and "bearer token" in r.stderr, r.stderr
    # the status endpoint: HTTPS with the same certificate, and a token
    ctx = ssl.create_default_context(cafile=ca)
    url = f"https://127.0.0.1:{setup.status_port}/status"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url, context=ctx, timeout=10)
    assert e.value.code == 401
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        assert json.loads(resp.read())["pid"] == info["pid"]
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {PROVE_TOKEN}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:  # a prover's view
        seen = json.loads(resp.read())
    assert "pid" not in seen and "config_path" not in seen and "engine" not in seen and seen["keys"][0]["id"] == "chain"
    assert "path" not in seen["keys"][0] and seen["state"] == "serving"
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0, r.stderr
    assert not ctl.exists() and not setup.pid_file.exists() and port_free(setup.port)


def test_mutual_tls(setup, pki, reaper, chain_bn128):
    circ, wtns = chain_bn128
    cfg = tls_config(setup, pki, tokens=False, mtls=True, preload={"chain": circ.zkey})
    start(cfg, reaper)
    r = snarkd("status", "--config", cfg)  # through the control socket: no client certificate needed
    assert r.returncode == 0, r.stderr
    ca = str(pki["ca"])
    for kw in ({}, dict(zip(("tls_cert", "tls_key"), map(str, pki["stranger"])))):
        with Client(setup.addr, timeout=10, tls_ca=ca, **kw) as c:
            with pytest.raises(RemoteDaemonError) as e:
                c.status(timeout=5)
            assert e.value.code == grpc.StatusCode.UNAVAILABLE, kw
    cert, key = map(str, pki["client"])
    with Client(setup.addr, timeout=60, tls_ca=ca, tls_cert=cert, tls_key=key) as c:
        reply = c.prove("chain", wtns.read_bytes())
        assert verify(json.loads(circ.vk.read_text()), reply.public, reply.proof)
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0, r.stderr
