"""A real daemon on the GPU whose keys stream their bases from the host ([gpus] stream_bases = "on"): `snarkd
start` with both example keys preloaded, status says streamed, a partitioned job's proofs (one batch per device
stage), `snarkd bench` with partitioned jobs, `snarkd stop` with nothing internal in the log. Every proof is
checked by snarkjs (or kept for tools/verify_later.sh on a GPU machine without Node.js).

    python -m pytest -q tests/gpu/test_gpu_daemon_streamed.py        (on the GPU machine)
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from gpu_helpers import EXAMPLES, require_gpu, snarkjs_verify

require_gpu()

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "daemon"))

from daemon_helpers import Reaper, Setup, free_port, parse_started, snarkd  # noqa: E402

from snarkd.daemon.client import Client  # noqa: E402

CURVES = ("bn128", "bls12381")
pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu-daemon-streamed")
    s = Setup(tmp, free_port())
    extra = "\n".join(["[gpus]", "devices = [0]", "workers_per_device = 1", 'stream_bases = "on"', ""])
    # the example keys copied: loading a key writes its circuit's witness program (.wprog) beside the wasm
    for c in CURVES:
        shutil.copytree(EXAMPLES[c], tmp / EXAMPLES[c].name, ignore=shutil.ignore_patterns("*.wprog"))
    cfg = s.write(workers=2, preload={c: tmp / EXAMPLES[c].name / "chain.zkey" for c in CURVES}, extra=extra)
    reaper = Reaper()
    reaper.pid_files.append(s.pid_file)
    r = snarkd("start", "--config", cfg, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr + s.log()
    reaper.pids.append(parse_started(r.stdout)["pid"])
    s.config = cfg
    yield s
    killed = reaper.collect()
    assert not killed, f"the daemon was still running after the tests: {s.log()[-3000:]}"


def status(d) -> dict:
    r = snarkd("status", "--json", "--config", d.config, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("curve", CURVES)
def test_a_partitioned_job_of_a_streamed_key(daemon, curve, tmp_path):
    data = (EXAMPLES[curve] / "chain.wtns").read_bytes()
    with Client(daemon.addr, timeout=300) as c:
        reply = c.prove(curve, witnesses=[data] * 10)
    assert len(reply.partitions) == 10
    for i, p in enumerate(reply.partitions):
        assert p.timings["msm_w"] > 0 and p.timings["msm_h"] > 0  # the streamed passes ran
        (tmp_path / f"proof{i}.json").write_text(json.dumps(p.proof))
        (tmp_path / f"public{i}.json").write_text(json.dumps(p.public))
        assert snarkjs_verify(EXAMPLES[curve] / "vk.json", tmp_path / f"public{i}.json", tmp_path / f"proof{i}.json")


def test_status_says_streamed(daemon):
    for k in status(daemon)["keys"]:
        (dev,) = k["devices"]
        assert dev["device"] == "cuda:0" and dev["streamed"] is True, k


def test_snarkd_bench_partitioned_jobs_of_a_streamed_key(daemon, tmp_path):
    out = tmp_path / "bench.json"
    r = snarkd("bench", "--addr", daemon.addr, "--key", "bn128", "--witness", EXAMPLES["bn128"] / "chain.wtns",
               "-c", "4", "-j", "2", "--partitions", "4", "--vk", EXAMPLES["bn128"] / "vk.json",
               "--proofs-dir", tmp_path / "proofs", "--json", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 completed, 0 failed" in r.stdout, r.stdout
    proofs = sorted((tmp_path / "proofs").glob("*proof*.json"))
    publics = sorted((tmp_path / "proofs").glob("*public*.json"))
    assert len(proofs) == len(publics) == 16
    assert snarkjs_verify(EXAMPLES["bn128"] / "vk.json", publics[0], proofs[0])


def test_stop(daemon):
    r = snarkd("stop", "--config", daemon.config, timeout=120)
    assert r.returncode == 0 and "snarkd stopped" in r.stdout, r.stdout + r.stderr
    log = daemon.log()
    assert "stopped (exit 0)" in log and "Traceback" not in log and "internal error" not in log, log[-4000:]
