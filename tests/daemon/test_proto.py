"""The committed gencode matches proto/snarkd/v1/snarkd.proto (regenerated with tools/gen_proto.sh)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from daemon_helpers import REPO


def test_generated_code_is_up_to_date(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools (dev dependency) regenerates the gencode")
    r = subprocess.run(["sh", str(REPO / "tools" / "gen_proto.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "OUT": str(tmp_path)}, timeout=120)
    assert r.returncode == 0, r.stderr
    committed = REPO / "src" / "snarkd" / "daemon" / "proto"
    for name in ("snarkd_pb2.py", "snarkd_pb2.pyi", "snarkd_pb2_grpc.py"):
        assert (tmp_path / name).read_text() == (committed / name).read_text(), f"{name} is stale: run tools/gen_proto.sh"


def test_gencode_runtime_versions():
    """The installed protobuf runtime accepts the gencode (runtime >= gencode, same major)."""
    import google.protobuf

    from snarkd.daemon.proto import snarkd_pb2

    text = (REPO / "src" / "snarkd" / "daemon" / "proto" / "snarkd_pb2.py").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("# Protobuf Python Version:"))
    gen = tuple(int(x) for x in line.split(":")[1].strip().split(".")[:3])
    run = tuple(int(x) for x in google.protobuf.__version__.split(".")[:3])
    assert run >= gen and run[0] == gen[0]
    assert snarkd_pb2.DESCRIPTOR.services_by_name["Prover"].methods_by_name["Prove"]
