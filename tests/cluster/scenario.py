"""The cluster scenario, run inside a private network namespace (netns.py) by test_cluster.py.

    python scenario.py SPEC.json            the cluster scenario below
    python scenario.py --local SPEC.json    [cluster] address = "local": the front starts a private Ray

A Ray cluster of a head (no CPUs: it runs no engine) and two worker nodes of one CPU each
(ray.cluster_utils.Cluster), a real front (`snarkd start` with [cluster] address = the head), and
clients (the Python client, `snarkd prove --addr`, the bench runner, `snarkd status`, GET /metrics).
Steps, each recorded in OUT/report.json (proofs written under OUT/proofs/ for snarkjs):

    proofs      both curves through the front; a witness computed on an actor from inputs; the bench
                runner (client-side verified) and `snarkd bench`
    partitions  one job of 4 partitions: they spread over the actors
    bad         a bad witness, a witness of the other curve, an unknown key id, a garbage key file, each
                failing alone while a good job completes
    load_key    a key loaded (and unloaded) at run time reaches the running actors (every key is shipped through the
                object store here: key_placement = "ship"; the path mode is tested in test_actor.py)
    status      nodes, actors, keys, per-actor throughput; /metrics per-actor series; `snarkd status`
    node_loss   16 jobs in flight, a worker node removed, a new node added: every job completes once,
                and the new node's actor takes work once its keys are resident
    stop        `snarkd stop` drains and ends the front

The local run: a front that starts its own Ray instance (one node, one actor on this machine's CPUs),
proofs on both curves, and `snarkd stop` leaving none of Ray's processes behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path[:0] = [str(HERE), str(REPO / "src")]

from netns import loopback_up  # noqa: E402

from snarkd.daemon.netcheck import free_tcp_port as free_port  # noqa: E402


def log(msg: str) -> None:
    print(f"[scenario {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def snarkd(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "snarkd", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def save(out: Path, name: str, proof: dict, public: list) -> dict:
    (out / f"{name}-proof.json").write_text(json.dumps(proof))
    (out / f"{name}-public.json").write_text(json.dumps(public))
    return {"proof": str(out / f"{name}-proof.json"), "public": str(out / f"{name}-public.json")}


def actors_of(reply) -> list[str]:
    """The actors that proved a reply's partitions (span workers are ACTOR/worker)."""
    return [sorted({s["worker"].split("/", 1)[0] for s in p.spans}) for p in reply.partitions]


def engine_status(client) -> dict:
    return json.loads(client.status()["engine_json"])


def wait_for(pred, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _enter(spec_path: str) -> tuple[dict, Path, Path]:
    """(the spec, its output folder, the proofs folder in it), with the namespace's loopback up and Ray
    told that nothing else can reach it: no token file in $HOME, no usage stats."""
    spec = json.loads(Path(spec_path).read_text())
    out = Path(spec["out"])
    proofs = out / "proofs"
    proofs.mkdir(parents=True, exist_ok=True)
    loopback_up()
    os.environ.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    return spec, out, proofs



def add_worker(cluster):
    """A one-CPU worker node; once more if Ray's own start-up of it timed out ("The current node timed out during
    startup": its raylet's registration has a fixed deadline that a loaded 2-core CI machine can miss right after a
    node was removed). Ray's start-up is not what this scenario checks; snarkd's handling of the node is."""
    try:
        return cluster.add_node(num_cpus=1, wait=False)
    except Exception as exc:  # noqa: BLE001 -- Ray raises a bare Exception for it
        if "timed out during startup" not in str(exc):
            raise
        log(f"ray's node start-up timed out, once more: {exc}")
        return cluster.add_node(num_cpus=1, wait=False)

def main(spec_path: str) -> int:
    spec, out, proofs = _enter(spec_path)
    import ray  # noqa: F401 - after the namespace's loopback is up
    from ray.cluster_utils import Cluster

    from snarkd.bench.runner import run_bench
    from snarkd.daemon.client import Client, RemoteInputError
    from snarkd.formats.wtns import parse_wtns, wtns_bytes

    report: dict = {"steps": {}}
    t0 = time.monotonic()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False,
        # node loss noticed in ~1.5 s (Ray's defaults take longer; the actor's own death is seen at once)
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3}})
    # Ray's own wait for a node is 30 s: too short on a loaded 2-core machine; wait longer here
    workers = [add_worker(cluster) for _ in range(2)]
    cluster.wait_for_nodes(timeout=180)
    report["cluster_s"] = time.monotonic() - t0
    log(f"cluster up at {cluster.address} in {report['cluster_s']:.1f}s")

    keys = spec["keys"]
    port, http = free_port(), free_port()
    addr = f"127.0.0.1:{port}"
    cfg = out / "front.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "{addr}"', f'pid_file = "{out}/front.pid"', f'log_file = "{out}/front.log"',
        f'status_listen = "127.0.0.1:{http}"', 'drain_timeout = "30s"',
        "[transport]", f'witness_spool = "{out}/spool"',
        "[synthesis]", "workers = 1", "threads = 1",
        "[gpus]", "workers_per_device = 1",
        "[debug]", 'synthesis_delay = "300ms"',  # proofs slow enough to be in flight when a node goes
        "[cluster]", f'address = "{cluster.address}"', "min_actors = 2", 'ready_timeout = "180s"',
        "actor_inflight = 2", f'key_cache = "{out}/key-cache"', 'key_placement = "ship"',
        "[keys]", f'allowed_dirs = ["{Path(spec["late"]["zkey"]).parent}"]',  # LoadKey of the late key
        "[keys.preload]", *[f'{c} = "{k["zkey"]}"' for c, k in keys.items()]]) + "\n")
    t1 = time.monotonic()
    r = snarkd("start", "--config", cfg)
    report["start"] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-3000:],
                       "seconds": time.monotonic() - t1}
    log(f"snarkd start rc={r.returncode} in {report['start']['seconds']:.1f}s: {r.stdout.strip()} {r.stderr[-500:]}")
    if r.returncode:
        (out / "report.json").write_text(json.dumps(report, indent=1))
        cluster.shutdown()
        return 1
    try:
        with Client(addr, timeout=180) as c:
            steps = report["steps"]
            # -- both curves, the CLI and the bench runner -----------------------------------
            got = []
            for curve, k in keys.items():
                w = Path(k["wtns"]).read_bytes()
                for i in range(2):
                    rep = c.prove(curve, w)
                    got.append({"curve": curve, **save(proofs, f"{curve}-{i}", rep.proof, rep.public),
                                "actors": actors_of(rep), "timings": rep.timings})
            r = snarkd("prove", "--addr", addr, "--key", "bn128", keys["bn128"]["wtns"], proofs / "cli-proof.json",
                       proofs / "cli-public.json")
            got.append({"curve": "bn128", "proof": str(proofs / "cli-proof.json"),
                        "public": str(proofs / "cli-public.json"), "cli_rc": r.returncode, "cli_err": r.stderr})
            vk = json.loads(Path(keys["bn128"]["vk"]).read_text())
            run = run_bench(addr, "bn128", witness=keys["bn128"]["wtns"], count=6, inflight=4, vk=vk, progress=False)
            # the witness computed on the actor from inputs (its circuit .wasm travelled with the key)
            rep = c.prove("bn128", inputs=[{"k": 3, "x": 2}])
            got.append({"curve": "bn128", **save(proofs, "inputs", rep.proof, rep.public), "inputs": True,
                        "timings": rep.timings})
            r = snarkd("bench", "--addr", addr, "--key", "bls12381", "--witness", keys["bls12381"]["wtns"], "-c", 4,
                       "-j", 2, "--vk", keys["bls12381"]["vk"], "--no-progress")
            cli_bench = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-2000:]}
            steps["proofs"] = {"proofs": got, "bench": {"verified": run.get("verified"), "count": run["count"],
                                                        "states": [j["state"] for j in run["jobs"]],
                                                        "summary_keys": sorted(run["summary"])},
                               "cli_bench": cli_bench}
            log("proofs done")
            # -- one job, 4 partitions --------------------------------------------------------
            w = Path(keys["bn128"]["wtns"]).read_bytes()
            rep = c.prove("bn128", witnesses=[w] * 4)
            steps["partitions"] = {"actors": actors_of(rep), "files": [
                {"curve": "bn128", **save(proofs, f"part-{p.index}", p.proof, p.public)} for p in rep.partitions]}
            log(f"partitions on {steps['partitions']['actors']}")
            # -- bad requests fail alone --------------------------------------------------------
            good = Path(keys["bn128"]["wtns"]).read_bytes()
            parsed = parse_wtns(good)
            values = parsed.to_ints()
            values[-1] = parsed.prime + 5  # not canonical: caught on the actor, in synthesis's check
            non_canonical = wtns_bytes(parsed.prime, values)
            other_curve = Path(keys["bls12381"]["wtns"]).read_bytes()
            results: dict = {}

            def attempt(name, key_id, data):
                try:
                    rr = c.prove(key_id, data)
                    results[name] = {"ok": True, **save(proofs, f"bad-step-{name}", rr.proof, rr.public)}
                except RemoteInputError as exc:
                    results[name] = {"ok": False, "code": exc.code.name, "error": str(exc)}

            threads = [threading.Thread(target=attempt, args=a) for a in (
                ("good", "bn128", good), ("non_canonical", "bn128", non_canonical),
                ("other_curve", "bn128", other_curve), ("unknown_key", "nope", good),
                ("good2", "bls12381", other_curve))]
            for t in threads:
                t.start()
            garbage = out / "garbage.zkey"
            garbage.write_bytes(b"zkey" + os.urandom(200))
            try:
                c.load_key("garbage", str(garbage))
                results["garbage_key"] = {"ok": True}
            except RemoteInputError as exc:
                results["garbage_key"] = {"ok": False, "code": exc.code.name, "error": str(exc)}
            for t in threads:
                t.join(120)
            steps["bad"] = results
            log(f"bad requests: { {k: v.get('code', 'ok') for k, v in results.items()} }")
            # -- a key loaded at run time, shipped through the object store --------------------------
            shipped = spec["late"]
            info = c.load_key("late", shipped["zkey"])
            rep = c.prove("late", Path(shipped["wtns"]).read_bytes())
            st = engine_status(c)
            c.unload_key("late")
            try:
                c.prove("late", Path(shipped["wtns"]).read_bytes())
                after_unload = "proved"
            except RemoteInputError as exc:
                after_unload = exc.code.name
            st2 = engine_status(c)
            steps["load_key"] = {"info": info, "holders": st["cluster"]["keys"].get("late"),
                                 "file": {"curve": "late", **save(proofs, "late", rep.proof, rep.public)},
                                 "after_unload": after_unload, "keys_after_unload": sorted(st2["cluster"]["keys"]),
                                 "actor_keys_after_unload": [a["keys"] for a in st2["cluster"]["actors"]]}
            c.load_key("late", shipped["zkey"])  # back, for the status step
            # -- status, metrics, `snarkd status` ----------------------------------------------------
            metrics = urllib.request.urlopen(f"http://127.0.0.1:{http}/metrics", timeout=10).read().decode()
            status_http = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=10).read())
            r = snarkd("status", "--config", cfg)
            steps["status"] = {"engine": engine_status(c), "metrics": metrics, "status_http_keys": sorted(status_http),
                               "cli": r.stdout, "cli_rc": r.returncode, "grpc": {k: v for k, v in c.status().items()
                                                                                 if k != "engine_json"}}
            log("status done")
            # -- node loss ------------------------------------------------------------------------
            before = engine_status(c)["jobs"]
            ids = [c.submit("bn128", good) for _ in range(16)]
            wait_for(lambda: engine_status(c)["jobs"]["completed"] >= before["completed"] + 2, 120, "first proofs")
            victim = workers[0]
            cluster.remove_node(victim)
            lost_at = time.monotonic()
            log("removed a worker node")
            fresh = add_worker(cluster)  # the front finds it (waited for below)
            ends = []
            for jid in ids:
                a = c.await_(jid, wait_s=180)
                ends.append({"id": jid, "state": a.state, "error": a.error,
                             "partitions": len(a.reply.partitions) if a.reply else 0,
                             "file": save(proofs, f"loss-{jid}", a.reply.proof, a.reply.public) if a.reply else None,
                             "actors": actors_of(a.reply) if a.reply else []})
            recovered_s = time.monotonic() - lost_at
            st = wait_for(lambda: (lambda s: s if any(a["state"] == "ready" and a["node_id"] == fresh.node_id
                                                      for a in s["cluster"]["actors"]) else None)(engine_status(c)),
                          120, "an actor on the new node")
            after_join = []
            for _ in range(6):
                rr = c.prove("bn128", good)
                after_join.append(actors_of(rr)[0])
            final = engine_status(c)
            steps["node_loss"] = {
                "removed_node": victim.node_id, "new_node": fresh.node_id, "ends": ends, "recovered_s": recovered_s,
                "jobs_before": before, "jobs_after": final["jobs"], "actors": final["cluster"]["actors"],
                "nodes": final["cluster"]["nodes"], "after_join_actors": after_join,
                "new_actor": [a["name"] for a in st["cluster"]["actors"] if a["node_id"] == fresh.node_id],
                "await_again": {jid: c.await_(jid, wait_s=1).state for jid in ids[:3]}}
            log(f"node loss: {[e['state'] for e in ends]}")
    finally:
        t2 = time.monotonic()
        r = snarkd("stop", "--config", cfg, timeout=120)
        report["stop"] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr, "seconds": time.monotonic() - t2}
        report["front_log"] = (out / "front.log").read_text()[-20000:] if (out / "front.log").exists() else ""
        report["total_s"] = time.monotonic() - t0
        (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
        cluster.shutdown()
        log(f"done in {report['total_s']:.1f}s")
    return 0


def confinement(addr: str, out: Path) -> list[dict]:
    """The front's answers to paths outside its rule (the single daemon's: engine.paths.ClientPaths): LoadKey of
    a file outside [keys] param_cache (the config's directory here) and of a symlink out of it, by-reference
    witnesses outside [transport] witness_spool/witness_dirs and a relative one."""
    import grpc

    from snarkd.daemon.proto import snarkd_pb2 as pb
    from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc

    (out / "escape.zkey").symlink_to("/etc/hostname")
    stub = pb_grpc.ProverStub(grpc.insecure_channel(addr))
    calls = [("LoadKey", pb.LoadKeyRequest(key_id="escape", path="/etc/passwd")),
             ("LoadKey", pb.LoadKeyRequest(key_id="escape", path=str(out / "escape.zkey"))),
             ("LoadKey", pb.LoadKeyRequest(key_id="escape", path="escape.zkey")),
             ("Prove", pb.ProveRequest(key_id="bn128", witness_paths=["/etc/passwd"])),
             ("Prove", pb.ProveRequest(key_id="bn128", witness_paths=["relative.wtns"]))]
    found = []
    for method, req in calls:
        try:
            getattr(stub, method)(req, timeout=60)
            found.append({"method": method, "code": "OK", "details": ""})
        except grpc.RpcError as exc:
            found.append({"method": method, "code": exc.code().name, "details": exc.details()})
    return found


def main_local(spec_path: str) -> int:
    import psutil

    spec, out, proofs = _enter(spec_path)
    from snarkd.daemon.client import Client

    keys = spec["keys"]
    addr = f"127.0.0.1:{free_port()}"
    cfg = out / "front.toml"
    cfg.write_text("\n".join([
        "[daemon]", f'listen = "{addr}"', f'pid_file = "{out}/front.pid"', f'log_file = "{out}/front.log"',
        "[transport]", f'witness_spool = "{out}/spool"', "[synthesis]", "workers = 1", "threads = 1",
        "[cluster]", 'address = "local"', 'ready_timeout = "180s"',
        "[keys.preload]", *[f'{c} = "{k["zkey"]}"' for c, k in keys.items()]]) + "\n")
    report: dict = {}
    t0 = time.monotonic()
    r = snarkd("start", "--config", cfg)
    report["start"] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-3000:],
                       "seconds": time.monotonic() - t0}
    ray_procs = []
    if r.returncode == 0:
        try:
            front = psutil.Process(int(r.stdout.split("pid ", 1)[1].split(",", 1)[0]))
            ray_procs = [p for p in front.children(recursive=True)]
            report["ray_processes"] = sorted({p.name() for p in ray_procs})
            with Client(addr, timeout=180) as c:
                report["proofs"] = []
                for curve, k in keys.items():
                    rep = c.prove(curve, Path(k["wtns"]).read_bytes())
                    report["proofs"].append({"curve": curve, **save(proofs, f"local-{curve}", rep.proof, rep.public),
                                             "actors": actors_of(rep)})
                report["cluster"] = engine_status(c)["cluster"]
            report["confine"] = confinement(addr, out)
        finally:
            r = snarkd("stop", "--config", cfg, timeout=120)
            report["stop"] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
            gone, alive = psutil.wait_procs(ray_procs, timeout=30)
            report["left_running"] = [p.name() for p in alive]
            for p in alive:
                p.kill()
    report["front_log"] = (out / "front.log").read_text()[-20000:] if (out / "front.log").exists() else ""
    report["total_s"] = time.monotonic() - t0
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    log(f"local run done in {report['total_s']:.1f}s")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--local":
        sys.exit(main_local(sys.argv[2]))
    sys.exit(main(sys.argv[1]))
