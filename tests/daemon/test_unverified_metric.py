"""Issue 33: proofs a daemon returns without any verification ([pipeline] self_verify = false, a job without
batch_verify) are counted per key in /metrics (`snarkd_unverified_proofs_total{key}`) and shown by
`snarkd status`; with self_verify on (the default) the counter stays 0."""

from __future__ import annotations

import pytest
from daemon_helpers import Setup, foreground_daemon, free_port, snarkd

from snarkd.daemon.client import Client

pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier

SERIES = 'snarkd_unverified_proofs_total{key="chain"}'


@pytest.mark.parametrize("self_verify", [False, True])
def test_unverified_proofs_are_counted_per_key(tmp_path, chain_bn128, self_verify):
    circ, wtns = chain_bn128
    s = Setup(tmp_path, free_port())
    cfg = s.write(preload={"chain": circ.zkey}, extra=f"[pipeline]\nself_verify = {str(self_verify).lower()}\n")
    with foreground_daemon(s, cfg), Client(s.addr, timeout=120) as c:
        m = c.metrics()["values"]
        assert m[SERIES] == 0 and m["snarkd_self_verify_enabled"] == (1 if self_verify else 0)
        c.prove("chain", wtns.read_bytes())
        c.prove("chain", witnesses=[wtns.read_bytes()] * 2)
        c.prove("chain", wtns.read_bytes(), batch_verify=True)  # verified as a batch: not counted
        m = c.metrics()["values"]
        assert m[SERIES] == (0 if self_verify else 3), m[SERIES]
        assert m["snarkd_proofs_completed_total"] == 3
        st = snarkd("status", "--config", cfg)
        assert st.returncode == 0, st.stderr
        assert ("\nunverified: " in st.stdout) == (not self_verify), st.stdout  # (the tmp path says "unverified" too)
        if not self_verify:
            assert "self_verify = false" in st.stdout and "chain 3" in st.stdout, st.stdout
