"""`snarkd bench` against a real daemon: c/j runs whose proofs snarkjs accepts, the report, JSON and
timeline PNG; the daemon's Prometheus /metrics and /status; peak RSS within budget + keys."""

from __future__ import annotations

import json
import signal
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "daemon"))

from daemon_helpers import Reaper, Setup, free_port, serve_foreground, snarkd, wait_serving  # noqa: E402

import oracle  # noqa: E402
from snarkd.bench.report import percentile, summarize, union_seconds  # noqa: E402
from snarkd.daemon.client import Client  # noqa: E402

BUDGET = 32 << 20


pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier (pytest -m "not slow" leaves it out)


@pytest.fixture(scope="module")
def chain_bn128():
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    return circ, circ.witness({"k": 3, "x": 2})


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain_bn128):
    circ, wtns = chain_bn128
    reaper = Reaper()
    s = Setup(tmp_path_factory.mktemp("bench"), free_port())
    http = free_port()
    cfg = s.write(workers=2, preload={"chain": circ.zkey},
                  extra=f'[memory]\nbudget = "{BUDGET}B"\n')
    text = cfg.read_text().replace("[daemon]\n", f'[daemon]\nstatus_listen = "127.0.0.1:{http}"\n', 1)
    cfg.write_text(text)
    proc = serve_foreground(cfg, reaper)
    try:
        wait_serving(s.addr, proc)
        with Client(s.addr) as c:
            ready_rss = c.status()["rss_bytes"]
        yield s, http, circ, wtns, ready_rss
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        reaper.collect()


def test_bench_cj_run_report_json_timeline(daemon, tmp_path):
    s, http, circ, wtns, ready_rss = daemon
    out, png, proofs = tmp_path / "run.json", tmp_path / "timeline.png", tmp_path / "proofs"
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps({"k": 3, "x": 2}))
    r = snarkd("bench", "--addr", s.addr, "--key", "chain", "--input", inp, "-c", 4, "-j", 2, "--partitions", 2,
               "--json", out, "--timeline", png, "--vk", circ.vk, "--proofs-dir", proofs, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for needle in ("4 completed, 0 failed, 4 verified", "s/proof", "proofs/min", "p95", "device busy: cpu",
                   "peak", "fingerprint", "version 0.1.0", "msm_h"):
        assert needle in r.stdout, (needle, r.stdout)
    run = json.loads(out.read_text())
    sm = run["summary"]
    assert sm["completed"] == 4 and sm["failed"] == 0 and 0 < sm["device_busy_fraction"]["cpu"] <= 1
    assert sm["latency_s"]["min"] <= sm["latency_s"]["p50"] <= sm["latency_s"]["p95"] <= sm["latency_s"]["max"]
    assert sm["in_flight_max"] <= 2  # -j 2: never a job more in flight (tests/bench/test_runner.py)
    assert run["daemon_after"]["config_fingerprint"] and run["daemon_after"]["engine"]["config"]["synthesis_workers"] == 2
    assert all(len(j["partitions"]) == 2 and "witness" in j["partitions"][0]["timings"] for j in run["jobs"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # every proof of the run passes snarkjs groth16 verify
    files = sorted(proofs.glob("proof-*.json"))
    assert len(files) == 8
    for f in files:
        assert oracle.snarkjs_verify(circ.vk, proofs / f.name.replace("proof-", "public-"), f), f
    # peak RSS: what concurrency added stays within the memory budget plus the resident keys
    with Client(s.addr) as c:
        st = c.status()
    keys = sum(k["bytes"] for k in st["keys"])
    assert st["memory_peak_bytes"] <= st["memory_budget_bytes"] == BUDGET
    assert st["peak_rss_bytes"] - ready_rss <= BUDGET + keys, (st["peak_rss_bytes"], ready_rss)


def test_bench_with_witness_and_bad_key(daemon, tmp_path):
    s, http, circ, wtns, _ = daemon
    r = snarkd("bench", "--addr", s.addr, "--key", "chain", "--witness", wtns, "-c", 3, "-j", 3, timeout=120)
    assert r.returncode == 0 and "3 completed, 0 failed" in r.stdout, r.stdout + r.stderr
    r = snarkd("bench", "--addr", s.addr, "--key", "nope", "--witness", wtns, "-c", 1, timeout=60)
    assert r.returncode != 0 and "no key 'nope'" in r.stderr, r.stderr
    r = snarkd("bench", "--addr", s.addr, "--key", "chain", "--witness", wtns, "-c", 0, timeout=60)
    assert r.returncode == 3 and "--count must be at least 1" in r.stderr


def test_metrics_and_status_over_http(daemon):
    s, http, circ, wtns, _ = daemon
    with Client(s.addr) as c:
        c.prove("chain", wtns.read_bytes(), priority=3)
    text = urllib.request.urlopen(f"http://127.0.0.1:{http}/metrics", timeout=10).read().decode()
    for needle in ("snarkd_proofs_completed_total", "snarkd_proofs_failed_total 0.0",
                   'snarkd_phase_duration_seconds_bucket{le="0.001",phase="msm_h"}', 'snarkd_queue_depth{queue="device"}',
                   "snarkd_in_flight", "snarkd_memory_budget_bytes 3.3554432e+07", "snarkd_memory_budget_used_bytes",
                   'snarkd_device_busy_seconds_total{device="cpu"}'):
        assert needle in text, needle
    st = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=10).read())
    assert st["state"] == "serving" and st["config_fingerprint"] and st["keys"][0]["id"] == "chain"
    assert st["engine"]["memory"]["budget"] == BUDGET and st["engine"]["jobs"]["completed"] >= 1
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"http://127.0.0.1:{http}/nope", timeout=10)
    assert e.value.code == 404


def test_report_math():
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([5], 95) == 5 and percentile([1, 3], 100) == 3
    assert union_seconds([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_seconds([(0, 10)], lo=2, hi=4) == 2
    run = {"t_start": 0.0, "t_end": 10.0, "jobs": [
        {"state": "COMPLETED", "start": 0.0, "end": 4.0, "partitions": [
            {"timings": {"device": 3000.0}, "spans": [{"stage": "device", "worker": "cpu/w0", "start": 1, "end": 4},
                                                        {"stage": "device", "worker": "cpu/w1", "start": 3, "end": 6}]}]},
        {"state": "FAILED", "start": 0.0, "end": 1.0, "error": "x"}]}
    sm = summarize(run)["summary"]
    assert sm["completed"] == 1 and sm["failed"] == 1 and sm["s_per_proof"] == 10.0
    assert sm["device_busy_fraction"] == {"cpu": 0.5} and sm["phase_median_ms"] == {"device": 3000.0}


def test_timeline_without_matplotlib_says_how_to_get_it(monkeypatch, tmp_path, capsys):
    """matplotlib is the `plot` extra: without it --timeline fails at once (exit 2, before any job), naming it."""
    import importlib.util

    from snarkd.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code = main(["bench", "--addr", "127.0.0.1:1", "--key", "k", "--witness", str(tmp_path / "w.wtns"),
                 "--timeline", str(tmp_path / "t.png")])
    assert code == 2 and "pip install 'snarkd[plot]'" in capsys.readouterr().err
    assert not (tmp_path / "t.png").exists()


def test_daemon_inputs_reports_a_run_whose_jobs_all_failed(tmp_path):
    """bench/daemon_inputs.py crashed with StatisticsError (no median of nothing) when every job failed, hiding
    the failures (issue 33, finding 8); now the run's record lists them and its medians are None."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import daemon_inputs

    run = {"jobs": [{"state": "FAILED", "error": "witness_paths[0]: outside the allowed directories"}] * 3,
           "summary": {"s_per_proof": None}}
    out = daemon_inputs.summarize("witness", 4, run)
    assert out["proofs"] == 0 and len(out["failed"]) == 3 and "outside" in out["failed"][0]
    assert out["latency_ms"] == {"p50": None, "p95": None} and out["s_per_proof"] is None
    assert daemon_inputs.medians([out, dict(out, kind="inputs")]) == {"witness": None, "inputs": None,
                                                                     "inputs_over_witness": None}


def test_daemon_inputs_pool_in_numeric_order_warm_inputs_never_timed(tmp_path):
    """bench/daemon_inputs.py --inputs-dir: inputs-N.json in N's order (10 after 9), the first --warm-inputs for
    the warm-up only, the rest timed; a pool no larger than the warm-up is refused."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import daemon_inputs

    for n in (1, 2, 9, 10, 11):
        (tmp_path / f"inputs-{n}.json").write_text("{}")
    (tmp_path / "inputs-x.json").write_text("{}")
    (tmp_path / "input.json").write_text("{}")
    files = daemon_inputs.pool_files(tmp_path)
    assert [f.name for f in files] == ["inputs-1.json", "inputs-2.json", "inputs-9.json", "inputs-10.json",
                                       "inputs-11.json"]
    warm, timed = daemon_inputs.split_pool(files, 2)
    assert [f.name for f in warm] == ["inputs-1.json", "inputs-2.json"] and len(timed) == 3
    with pytest.raises(SystemExit, match="more than --warm-inputs 5"):
        daemon_inputs.split_pool(files, 5)
