"""The Aggregate RPC against a real CPU daemon: aggregates of finished jobs and of inline proofs that
`snarkd verify-aggregate` accepts (byte for byte what `snarkd aggregate` writes), every refusal with its code
and field, the concurrency bound, and a daemon that keeps serving; batch-verified jobs through the daemon."""

from __future__ import annotations

import json
import threading

import grpc
import pytest
from daemon_helpers import Setup, foreground_daemon, free_port

from snarkd.cli import main
from snarkd.daemon.client import Client, RemoteInputError

pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain_bn128):
    """A daemon with the chain key preloaded and a dev SRS (max_n 8) as its [aggregate] srs; beside it (inside
    param_cache) a second dev SRS too small for 4 proofs, one of the other curve, and a file that is no SRS."""
    circ, _ = chain_bn128
    d = tmp_path_factory.mktemp("aggregate")
    for name, curve, max_n in (("dev.srs", "bn128", 8), ("small.srs", "bn128", 2), ("bls.srs", "bls12381", 4)):
        assert main(["aggregation-srs", "--dev", "--curve", curve, "--max", str(max_n), str(d / name)]) == 0
    (d / "junk.srs").write_bytes(b"SNKDAGGS" + b"\0" * 64)
    s = Setup(d, free_port())
    cfg = s.write(workers=2, preload={"chain": circ.zkey},
                  extra=f'[keys]\nallowed_dirs = ["{circ.zkey.parent}"]\n[aggregate]\nsrs = "{d / "dev.srs"}"\n'
                        'max_concurrent = 1\n')
    with foreground_daemon(s, cfg) as proc:
        drain(proc)
        yield s, proc, circ


def drain(proc) -> None:
    """Read the daemon's stderr (its log) as it comes: a pipe nobody reads fills up at 64 KiB, and then the
    daemon's next log line blocks it (this module's jobs log a few hundred partitions)."""
    threading.Thread(target=proc.stderr.read, daemon=True).start()


@pytest.fixture(scope="module")
def witnesses(chain_bn128):
    circ, _ = chain_bn128
    return [circ.witness({"k": k, "x": 2}).read_bytes() for k in range(1, 9)]


def verify_aggregate(circ, srs, text: str, tmp) -> int:
    (tmp / "agg.json").write_text(text)
    return main(["verify-aggregate", str(circ.vk), str(srs), str(tmp / "agg.json")])


def cli_aggregate(circ, srs, proofs: list, tmp) -> str:
    """What `snarkd aggregate` writes for these (public, proof) pairs."""
    files = []
    for i, (pub, proof) in enumerate(proofs):
        (tmp / f"pub{i}.json").write_text(json.dumps(pub))
        (tmp / f"proof{i}.json").write_text(json.dumps(proof))
        files += [str(tmp / f"pub{i}.json"), str(tmp / f"proof{i}.json")]
    assert main(["aggregate", str(circ.vk), str(srs), str(tmp / "cli.json"), *files, "-q"]) == 0
    return (tmp / "cli.json").read_text()


def refused(call, code, *needles):
    with pytest.raises(RemoteInputError) as e:
        call()
    assert e.value.code == code, e.value
    for n in needles:
        assert n in str(e.value), (n, str(e.value))


def test_aggregates_of_finished_jobs_and_of_inline_proofs_verify(daemon, witnesses, tmp_path):
    s, proc, circ = daemon
    srs = s.dir / "dev.srs"
    with Client(s.addr, timeout=120) as c:
        two = c.submit("chain", witnesses=witnesses[:2])  # a job of two partitions: two proofs, in order
        one = [c.submit("chain", w) for w in witnesses[2:4]]
        replies = [c.await_(j).reply for j in [two, *one]]
        proofs = [(p.public, p.proof) for r in replies for p in r.partitions]
        assert [pub[1] for pub, _ in proofs] == ["1", "2", "3", "4"]
        by_jobs = c.aggregate("chain", job_ids=[two, *one], srs_path=str(srs))
        assert by_jobs.n == 4 and by_jobs.dev_srs and by_jobs.timings["aggregate"] > 0
        assert verify_aggregate(circ, srs, by_jobs.json, tmp_path) == 0
        assert json.loads(by_jobs.json)["public"] == [list(pub) for pub, _ in proofs]
        # the same proofs inline, and the SRS left to [aggregate] srs: the same aggregate, byte for byte as
        # `snarkd aggregate` writes it (aggregation is deterministic: Fiat-Shamir, no randomness)
        inline = c.aggregate("chain", proofs=proofs)
        assert inline.json == by_jobs.json == cli_aggregate(circ, srs, proofs, tmp_path)
        # the CLI through the daemon: both ways
        out = tmp_path / "via-daemon.json"
        assert main(["aggregate", "--addr", s.addr, "--key", "chain", str(out), "--jobs", two, *one, "-q"]) == 0
        assert out.read_text() == by_jobs.json
        files = [str(p) for i in range(2) for p in (tmp_path / f"pub{i}.json", tmp_path / f"proof{i}.json")]
        assert main(["aggregate", "--addr", s.addr, "--key", "chain", "--srs", str(srs), str(out), *files]) == 0
        assert verify_aggregate(circ, srs, out.read_text(), tmp_path) == 0 and json.loads(out.read_text())["n"] == 2
        m = c.metrics()["values"]
        assert m['snarkd_aggregations_total{result="completed"}'] >= 4
        assert m["snarkd_aggregated_proofs_total"] >= 14 and m["snarkd_aggregations_running"] == 0


def test_every_bad_request_is_refused_naming_why_and_the_daemon_goes_on(daemon, witnesses, tmp_path):
    s, proc, circ = daemon
    INVALID, NOT_FOUND = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND
    with Client(s.addr, timeout=120) as c:
        reply = c.prove("chain", witnesses=witnesses[:4])
        good = [(p.public, p.proof) for p in reply.partitions]
        job = reply.job_id
        bad_proof = dict(good[2][1], pi_a=good[2][1]["pi_c"], pi_c=good[2][1]["pi_a"])
        cases = [
            (lambda: c.aggregate("chain", proofs=good[:3]), INVALID, "3 proof(s) given", "power of two"),
            (lambda: c.aggregate("chain", proofs=good[:1]), INVALID, "1 proof(s) given"),
            (lambda: c.aggregate("chain", job_ids=[job], proofs=good), INVALID, "job_ids or proofs, not both"),
            (lambda: c.aggregate("", proofs=good), INVALID, "key_id"),
            (lambda: c.aggregate("nope", proofs=good), NOT_FOUND, "no key with id 'nope'"),
            (lambda: c.aggregate("chain", job_ids=[job, "no-such-job"]), NOT_FOUND, "no-such-job"),
            (lambda: c.aggregate("chain", proofs=[*good[:2], (good[2][0], bad_proof), good[3]]), INVALID,
             "1 of the 4 proofs do not verify", "proofs[2]"),
            (lambda: c.aggregate("chain", proofs=good[:2] + [(good[0][0], good[2][1]), (good[0][0], good[3][1])]),
             INVALID, "2 of the 4 proofs do not verify", "proofs[2], proofs[3]"),
            (lambda: c.aggregate("chain", proofs=[("[]", "{not json")] + good[1:]), INVALID, "proofs[0].proof_json"),
            (lambda: c.aggregate("chain", proofs=good, srs_path=str(s.dir / "small.srs")), INVALID, "srs_path",
             "small.srs", "from 2 to 2"),
            (lambda: c.aggregate("chain", proofs=good, srs_path=str(s.dir / "junk.srs")), INVALID, "srs_path",
             "junk.srs"),
            (lambda: c.aggregate("chain", proofs=good, srs_path=str(s.dir / "missing.srs")), INVALID, "srs_path",
             "cannot read"),
            (lambda: c.aggregate("chain", proofs=good, srs_path=str(s.dir / "bls.srs")), INVALID,
             "an SRS of bls12381, but key 'chain' is of bn128"),
            (lambda: c.aggregate("chain", proofs=good, srs_path="/etc/passwd"), grpc.StatusCode.PERMISSION_DENIED,
             "srs_path '/etc/passwd' is outside the directories"),
        ]
        for call, code, *needles in cases:
            refused(call, code, *needles)
        # jobs that are not (yet, or ever) completed, and jobs of another key
        failed = c.submit("chain", inputs=[{"k": 3}])  # no x: the witness calculation fails
        assert c.await_(failed).state == "FAILED"
        refused(lambda: c.aggregate("chain", job_ids=[job, failed] * 2), INVALID,
                f"job_ids[1]: job {failed!r} is failed and has no proofs to aggregate")
        c.load_key("other", str(circ.zkey))
        try:
            theirs = c.prove("other", witnesses[0]).job_id
            refused(lambda: c.aggregate("chain", job_ids=[job, theirs] * 2), INVALID,
                    f"job {theirs!r} proved with key 'other', not key_id 'chain'")
        finally:
            c.unload_key("other")
        # a job not yet completed: submitted just before the call. On a loaded machine the call can come after it
        # has finished (its proofs then count: 4 + n, refused as no power of two), so a lost race is run again with
        # a longer job; the refusal that counts is the one for a job still queued or running
        for n in (32, 128, 256):
            slow = c.submit("chain", witnesses=[witnesses[0]] * n)
            with pytest.raises(RemoteInputError) as e:
                c.aggregate("chain", job_ids=[job, slow])
            c.cancel(slow)
            if "power of two" not in str(e.value):
                break
        assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION, e.value
        assert f"job {slow!r} is" in str(e.value) and "not completed" in str(e.value), e.value
        # still serving, and still aggregating
        assert c.health() == "SERVING" and proc.poll() is None
        ok = c.aggregate("chain", job_ids=[job])
        assert verify_aggregate(circ, s.dir / "dev.srs", ok.json, tmp_path) == 0
        m = c.metrics()["values"]
        assert m['snarkd_aggregations_total{result="rejected"}'] >= len(cases) + 3


def test_aggregations_past_max_concurrent_are_refused(daemon, witnesses, tmp_path):
    """[aggregate] max_concurrent = 1: of calls made at once, those that find one running are refused
    (RESOURCE_EXHAUSTED naming the setting), the others complete; meanwhile the daemon answers other calls."""
    s, proc, circ = daemon
    with Client(s.addr, timeout=120) as c:
        reply = c.prove("chain", witnesses=witnesses)
        proofs = [(p.public, p.proof) for p in reply.partitions]
        before = c.metrics()["values"]['snarkd_aggregations_total{result="busy"}']
    outcomes, start = [], threading.Barrier(6)

    def call():
        with Client(s.addr, timeout=120) as c:
            start.wait()
            try:
                outcomes.append(c.aggregate("chain", proofs=proofs).json)
            except RemoteInputError as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    busy = [o for o in outcomes if isinstance(o, RemoteInputError)]
    done = [o for o in outcomes if isinstance(o, str)]
    assert len(outcomes) == 6 and done, outcomes
    assert all(e.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "[aggregate] max_concurrent (1)" in str(e)
               for e in busy), busy
    assert len(set(done)) == 1 and verify_aggregate(circ, s.dir / "dev.srs", done[0], tmp_path) == 0
    with Client(s.addr, timeout=30) as c:
        assert c.metrics()["values"]['snarkd_aggregations_total{result="busy"}'] == before + len(busy)


def test_a_batch_verified_job_through_the_daemon(daemon, witnesses):
    s, proc, circ = daemon
    with Client(s.addr, timeout=120) as c:
        reply = c.prove("chain", witnesses=witnesses[:4], batch_verify=True)
        assert [p.public[1] for p in reply.partitions] == ["1", "2", "3", "4"]
        assert reply.timings["verify"] > 0 and sum("verify" in p.timings for p in reply.partitions) == 1
        agg = c.aggregate("chain", job_ids=[reply.job_id])  # its proofs verify: the aggregate covers them
        assert agg.n == 4


def test_jobs_finished_before_a_restart_are_aggregated_from_the_journal(tmp_path, chain_bn128, witnesses):
    """A job is aggregatable as long as Await can fetch it: after a restart, from the journal's result."""
    circ, _ = chain_bn128
    assert main(["aggregation-srs", "--dev", "--curve", "bn128", "--max", "4", str(tmp_path / "dev.srs")]) == 0
    s = Setup(tmp_path, free_port())
    cfg = s.write(preload={"chain": circ.zkey})
    with foreground_daemon(s, cfg) as proc:
        drain(proc)
        with Client(s.addr, timeout=120) as c:
            ids = [c.prove("chain", witnesses=witnesses[:2]).job_id, c.prove("chain", witnesses=witnesses[2:4]).job_id]
            before = c.aggregate("chain", job_ids=ids, srs_path="dev.srs")  # relative: to param_cache
    with foreground_daemon(s, cfg) as proc:
        drain(proc)
        with Client(s.addr, timeout=120) as c:
            after = c.aggregate("chain", job_ids=ids, srs_path="dev.srs")
            refused(lambda: c.aggregate("chain", job_ids=ids), grpc.StatusCode.INVALID_ARGUMENT,
                    "srs_path: none given, and this daemon has no [aggregate] srs")
    assert after.json == before.json and verify_aggregate(circ, tmp_path / "dev.srs", after.json, tmp_path) == 0
