"""`snarkd keys list|load|unload` against a running daemon with a key budget of one key:
evictions and reloads show in the listing, in the job's timings and in /metrics."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from daemon_helpers import free_port, snarkd, start_daemon

from snarkd.daemon.client import Client

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chain-bn128"


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics:\n{text}")


def test_keys_cli_with_a_budget_of_one(setup, reaper, chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    status_port = free_port()
    # the example key copied: loading a key writes its circuit's witness program (.wprog) beside the wasm
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("*.wprog"))
    cfg = setup.write(preload={"small": circ.zkey, "example": example / "chain.zkey"}, extra=f'[keys]\nmax_resident = 1\nallowed_dirs = ["{example}"]\n')  # LoadKey may name it
    cfg.write_text(cfg.read_text().replace("[daemon]\n", f'[daemon]\nstatus_listen = "127.0.0.1:{status_port}"\n'))
    start_daemon(cfg, reaper)

    listing = snarkd("keys", "list", "--config", cfg, "--json")
    assert listing.returncode == 0, listing.stderr
    keys = {k["id"]: k for k in json.loads(listing.stdout)["keys"]}
    assert not keys["small"]["resident"] and keys["example"]["resident"]  # loading "example" evicted "small"
    assert keys["small"]["curve"] == "bn128" and keys["small"]["bytes"] > 0 and keys["small"]["evictions"] == 1

    with Client(setup.addr, timeout=60) as c:
        reply = c.prove("small", wtns.read_bytes())  # reloads "small", evicting "example"
    assert reply.timings["key_load"] > 0
    text = snarkd("keys", "list", "--addr", setup.addr)
    assert text.returncode == 0, text.stderr
    rows = {line.split()[0]: line for line in text.stdout.splitlines()[1:]}
    assert "host" in rows["small"] and "evicted (reloads on its next job)" in rows["example"]
    assert "key budget: max_resident 1" in text.stdout and "evictions: host 2" in text.stdout
    assert " 1 " in rows["small"] and "ago" in rows["small"]  # one proof, used just now

    with urllib.request.urlopen(f"http://127.0.0.1:{status_port}/metrics", timeout=10) as resp:
        prom = resp.read().decode()
    assert metric(prom, 'snarkd_key_evictions_total{place="host"}') == 2
    assert metric(prom, "snarkd_key_reloads_total") == 1
    assert metric(prom, 'snarkd_keys_resident{place="host"}') == 1
    assert metric(prom, 'snarkd_key_resident{key="example",place="host"}') == 0
    assert metric(prom, 'snarkd_key_proofs_total{key="small"}') == 1

    r = snarkd("keys", "load", "third", example / "chain.zkey", "--config", cfg)
    assert r.returncode == 0 and "key third loaded: bn128" in r.stdout, r.stderr
    r = snarkd("keys", "unload", "third", "--config", cfg)
    assert r.returncode == 0 and "key third unloaded" in r.stdout, r.stderr
    r = snarkd("keys", "unload", "third", "--config", cfg)
    assert r.returncode == 3 and "no key with id 'third'" in r.stderr
    r = snarkd("keys", "load", "bad", tmp_path / "missing.zkey", "--config", cfg)
    assert r.returncode == 3 and "missing.zkey" in r.stderr
    r = snarkd("keys", "list", "--addr", f"127.0.0.1:{free_port()}", "--timeout", "3")
    assert r.returncode == 5 and "cannot reach snarkd" in r.stderr
    assert snarkd("stop", "--config", cfg).returncode == 0
