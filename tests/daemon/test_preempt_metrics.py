"""Preemption through the gRPC servicer, in process (a real Engine, the CPU backend): an urgent job submitted while
a bulk job's device stage runs has its device stage run at the bulk one's yield point (engine/preempt.py), both
proofs verify, and the Metrics text, the status's engine record and `snarkd status`'s line count it per device,
with the skipped preemptions' series at zero for each reason."""

from __future__ import annotations

import json

from preemption import hold_first_yield, queued_head
from test_deadline_service import Context, Gate, start_service, stop_services

from snarkd.config.lanes import Lane
from snarkd.daemon.lifecycle import _preemption_lines
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.verifier import verify

LANES = {"urgent": Lane("urgent", priority=10, share=0.5), "bulk": Lane("bulk")}


def test_a_preemption_is_counted_in_metrics_and_status(chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    s = start_service(circ.zkey, tmp_path, False, {"gate": Gate()}, lanes=LANES)
    try:
        reached = hold_first_yield(s.engine, queued_head(s.engine))
        ctx = Context("admin")
        bulk = s.Submit(pb.ProveRequest(key_id="chain", witness=wtns.read_bytes(), lane="bulk"), ctx).job_id
        assert reached.wait(60)
        urgent = s.Submit(pb.ProveRequest(key_id="chain", witness=wtns.read_bytes(), lane="urgent"), ctx).job_id
        for job_id in (bulk, urgent):
            r = s.Await(pb.AwaitRequest(job_id=job_id, timeout_s=120), ctx)
            assert r.state == pb.COMPLETED, r.error
            assert verify(vk, json.loads(r.result.public_json), json.loads(r.result.proof_json))
        text = s.Metrics(pb.MetricsRequest(), ctx).text
        assert 'snarkd_preemptions_total{device="cpu"} 1.0' in text
        for reason in ("device_memory", "key_not_resident"):
            assert f'snarkd_preemptions_skipped_total{{device="cpu",reason="{reason}"}} 0.0' in text
        engine_json = s.Status(pb.StatusRequest(), ctx).engine_json
        (dev,) = json.loads(engine_json)["devices"]
        assert dev["preemptions"] == 1 and dev["preempt_skipped"] == {}
        assert _preemption_lines(engine_json) == ["preemptions: cpu 1"]  # snarkd status's line
    finally:
        stop_services([s])
