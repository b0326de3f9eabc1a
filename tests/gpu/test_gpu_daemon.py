"""A real daemon on the GPU, end to end, on both curves: `snarkd start` with both example keys preloaded on
cuda:0, proofs from a witness (`snarkd prove --addr`) and from inputs (the daemon computes the witness),
`snarkd status`, `snarkd keys list/load/unload`, GET /metrics scraped, `snarkd bench`, a cancelled job,
a job batch-verified and an Aggregate of its proofs (the Miller loops on cuda:0, [aggregate] backend auto),
`snarkd stop`. Every proof is checked by snarkjs. Skipped without CuPy or a CUDA device.

The tests run in order on one daemon (module scope). [debug] synthesis_delay holds each job 300 ms in
synthesis, so a job submitted and cancelled at once is still queued or in synthesis when the cancel arrives.

    python -m pytest -q tests/gpu/test_gpu_daemon.py        (on the GPU machine)
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import urllib.request
from pathlib import Path

import pytest

from gpu_helpers import EXAMPLES, require_gpu, snarkjs_verify

require_gpu()

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "daemon"))

from daemon_helpers import Reaper, Setup, free_port, parse_started, snarkd  # noqa: E402

from snarkd.daemon.client import Client  # noqa: E402

CURVES = ("bn128", "bls12381")


pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier (pytest -m "not slow" leaves it out)


class Daemon:
    def __init__(self, setup: Setup, config: Path, metrics_port: int):
        self.setup, self.config, self.addr = setup, config, setup.addr
        self.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"

    def cli(self, *args, timeout: float = 300):
        return snarkd(*args, timeout=timeout)

    def status(self) -> dict:
        r = self.cli("status", "--json", "--config", self.config)
        assert r.returncode == 0, r.stdout + r.stderr
        return json.loads(r.stdout)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu-daemon")
    s = Setup(tmp, free_port())
    metrics = free_port()
    srs = tmp / "agg.srs"
    r = snarkd("aggregation-srs", "--dev", "--curve", "bn128", "--max", "32", srs, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    extra = "\n".join(["[gpus]", "devices = [0]", "workers_per_device = 2",
                       "[aggregate]", f"srs = {json.dumps(str(srs))}",
                       "[keys]", f"allowed_dirs = [{json.dumps(str(tmp))}]",
                       "[debug]", 'synthesis_delay = "300ms"', ""])
    # the example keys copied: jobs from inputs write the witness program (.wprog) beside the key's wasm
    for c in CURVES:
        shutil.copytree(EXAMPLES[c], tmp / EXAMPLES[c].name, ignore=shutil.ignore_patterns("*.wprog"))
    cfg = s.write(workers=2, preload={c: tmp / EXAMPLES[c].name / "chain.zkey" for c in CURVES}, extra=extra)
    # the HTTP endpoint goes into [daemon], which Setup.write opens first
    cfg.write_text(cfg.read_text().replace("[transport]", f'status_listen = "127.0.0.1:{metrics}"\n[transport]', 1))
    reaper = Reaper()
    reaper.pid_files.append(s.pid_file)
    r = snarkd("start", "--config", cfg, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr + s.log()
    reaper.pids.append(parse_started(r.stdout)["pid"])
    d = Daemon(s, cfg, metrics)
    d.srs = srs
    d.keys = tmp  # the copied example keys: tmp / "chain-bn128" / "chain.zkey"
    yield d
    killed = reaper.collect()
    assert not killed, f"the daemon was still running after the tests: {s.log()[-3000:]}"


def snarkjs_ok(curve: str, proof: dict, public: list, where: Path) -> bool:
    (where / "proof.json").write_text(json.dumps(proof))
    (where / "public.json").write_text(json.dumps(public))
    return snarkjs_verify(EXAMPLES[curve] / "vk.json", where / "public.json", where / "proof.json")


def test_started_on_the_gpu_with_both_keys(daemon):
    st = daemon.status()
    assert st["state"] == "serving" and st["devices"] == ["cuda:0"], st
    assert {k["id"] for k in st["keys"]} == set(CURVES) and all(k["preloaded"] for k in st["keys"])
    assert "devices=cuda:0" in daemon.setup.log()


@pytest.mark.parametrize("curve", CURVES)
def test_prove_a_witness_with_snarkd_prove(daemon, curve, tmp_path):
    r = daemon.cli("prove", "--addr", daemon.addr, "--key", curve, EXAMPLES[curve] / "chain.wtns",
                   tmp_path / "proof.json", tmp_path / "public.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert snarkjs_verify(EXAMPLES[curve] / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")


@pytest.mark.parametrize("curve", CURVES)
def test_prove_from_inputs(daemon, curve, tmp_path):
    inputs = json.loads((EXAMPLES[curve] / "input.json").read_text())
    with Client(daemon.addr, timeout=300) as c:
        reply = c.prove(curve, inputs=[inputs, inputs])
    assert len(reply.partitions) == 2
    for p in reply.partitions:
        assert p.timings["witness"] > 0 and p.timings["msm_h"] > 0  # computed by the daemon; MSMs timed
        assert snarkjs_ok(curve, p.proof, p.public, tmp_path)


def test_batch_verified_job_then_aggregate_on_the_gpu(daemon, tmp_path):
    inputs = json.loads((EXAMPLES["bn128"] / "input.json").read_text())
    with Client(daemon.addr, timeout=300) as c:
        # 32 proofs: 6 x 32 pairs in the first commitments, above GPU_MIN_PAIRS, so the GPU's Miller loops run
        reply = c.prove("bn128", inputs=[inputs] * 32, job_id="gpu-agg-1", batch_verify=True)
        assert len(reply.partitions) == 32 and any(p.timings.get("verify", 0) > 0 for p in reply.partitions)
        assert snarkjs_ok("bn128", reply.partitions[0].proof, reply.partitions[0].public, tmp_path)
        agg = c.aggregate("bn128", job_ids=["gpu-agg-1"])
    assert agg.n == 32 and agg.dev_srs
    (tmp_path / "agg.json").write_text(agg.json)
    r = daemon.cli("verify-aggregate", EXAMPLES["bn128"] / "vk.json", daemon.srs, tmp_path / "agg.json")
    assert r.returncode == 0, r.stdout + r.stderr
    # the same aggregate as the CLI makes on the CPU (aggregation is deterministic)
    pairs = []
    for i, p in enumerate(reply.partitions):
        (tmp_path / f"p{i}.json").write_text(json.dumps(p.proof))
        (tmp_path / f"pub{i}.json").write_text(json.dumps(p.public))
        pairs += [tmp_path / f"pub{i}.json", tmp_path / f"p{i}.json"]
    r = daemon.cli("aggregate", EXAMPLES["bn128"] / "vk.json", daemon.srs, tmp_path / "cpu.json", *pairs,
                   "--backend", "cpu", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "cpu.json").read_text() == agg.json
    assert "aggregation: Miller loops on cuda:0" in daemon.setup.log()


def test_status_shows_each_key_resident_on_the_gpu(daemon):
    st = daemon.status()
    for k in st["keys"]:
        (dev,) = k["devices"]
        assert dev["device"] == "cuda:0" and dev["bytes"] > 0 and dev["streamed"] is False, k
        assert k["proofs"] >= 3
    engine = json.loads(st["engine_json"])
    (gpu,) = engine["devices"]
    assert gpu["name"] == "cuda:0" and gpu["kernel_busy_s"] > 0 and gpu["busy_s"] > 0
    assert engine["keys"]["resident"]["cuda:0"] == 2
    r = daemon.cli("status", "--config", daemon.config)
    assert r.returncode == 0 and "devices: cuda:0" in r.stdout, r.stdout + r.stderr


def test_keys_list_load_prove_unload(daemon, tmp_path):
    zkey = daemon.keys / EXAMPLES["bn128"].name / "chain.zkey"
    r = daemon.cli("keys", "load", "extra", zkey, "--addr", daemon.addr, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["id"] == "extra"
    r = daemon.cli("prove", "--addr", daemon.addr, "--key", "extra", EXAMPLES["bn128"] / "chain.wtns",
                   tmp_path / "proof.json", tmp_path / "public.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert snarkjs_verify(EXAMPLES["bn128"] / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")
    r = daemon.cli("keys", "list", "--addr", daemon.addr, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    listed = {k["id"]: k for k in json.loads(r.stdout)["keys"]}
    assert set(listed) == {*CURVES, "extra"} and [d["device"] for d in listed["extra"]["devices"]] == ["cuda:0"]
    r = daemon.cli("keys", "list", "--addr", daemon.addr)
    assert r.returncode == 0 and "cuda:0" in r.stdout, r.stdout + r.stderr
    r = daemon.cli("keys", "unload", "extra", "--addr", daemon.addr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert {k["id"] for k in daemon.status()["keys"]} == set(CURVES)


def test_metrics_scraped(daemon):
    with urllib.request.urlopen(daemon.metrics_url, timeout=30) as resp:
        text = resp.read().decode()
    for curve in CURVES:
        assert f'snarkd_key_resident{{key="{curve}",place="cuda:0"}} 1.0' in text
    busy = re.search(r'snarkd_device_kernel_busy_seconds_total\{device="cuda:0"\} (\S+)', text)
    assert busy and float(busy.group(1)) > 0
    done = re.search(r"^snarkd_proofs_completed_total (\S+)", text, re.M)
    assert done and float(done.group(1)) >= 5  # jobs: 2 by snarkd prove, 2 from inputs, 1 with "extra"
    assert 'snarkd_phase_duration_seconds_count{phase="msm_h"}' in text


def test_snarkd_bench(daemon, tmp_path):
    out = tmp_path / "bench.json"
    r = daemon.cli("bench", "--addr", daemon.addr, "--key", "bls12381", "--witness",
                   EXAMPLES["bls12381"] / "chain.wtns", "-c", "8", "-j", "4", "--vk", EXAMPLES["bls12381"] / "vk.json",
                   "--proofs-dir", tmp_path / "proofs", "--json", out, "--no-progress", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8 completed, 0 failed, 8 verified by the client" in r.stdout, r.stdout
    proofs = sorted((tmp_path / "proofs").glob("*proof*.json"))
    publics = sorted((tmp_path / "proofs").glob("*public*.json"))
    assert len(proofs) == len(publics) == 8
    assert snarkjs_verify(EXAMPLES["bls12381"] / "vk.json", publics[0], proofs[0])
    run = json.loads(out.read_text())
    assert run["daemon_after"]["engine"]["devices"][0]["name"] == "cuda:0"


def test_a_cancelled_job_ends_cancelled_and_the_daemon_goes_on(daemon, tmp_path):
    data = (EXAMPLES["bn128"] / "chain.wtns").read_bytes()
    with Client(daemon.addr, timeout=120) as c:
        job = c.submit("bn128", data)
        assert c.cancel(job) == ("CANCELLED", True)
        res = c.await_(job, 60)
        assert res.state == "CANCELLED" and res.reply is None
        reply = c.prove("bn128", data)
    assert snarkjs_ok("bn128", reply.proof, reply.public, tmp_path)
    assert daemon.status()["cancelled"] >= 1


def test_stop(daemon):
    r = daemon.cli("stop", "--config", daemon.config, timeout=120)
    assert r.returncode == 0 and "snarkd stopped" in r.stdout, r.stdout + r.stderr
    log = daemon.setup.log()
    assert "stopped (exit 0)" in log and "Traceback" not in log and "internal error" not in log, log[-4000:]
    assert not daemon.setup.pid_file.exists()
