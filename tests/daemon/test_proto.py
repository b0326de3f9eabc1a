"""The committed gencode matches proto/snarkd/v1/snarkd.proto (regenerated with tools/gen_proto.sh)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from daemon_helpers import REPO


# The generators stamp their own versions into the gencode (grpcio-tools' GRPC_GENERATED_VERSION, protoc's protobuf
# version and the runtime check's numbers): a fresh install takes the newest grpcio-tools that pyproject's range
# allows, so the stamps follow the tool, not the .proto. The comparison below is of everything else; the committed
# stamps stay the floor the runtime must meet (test_gencode_runtime_versions, and the gencode's own import check).
_TOOL_STAMPS = (
    (re.compile(r"^GRPC_GENERATED_VERSION = '[^']*'$", re.M), "GRPC_GENERATED_VERSION = '<grpcio-tools>'"),
    (re.compile(r"^# Protobuf Python Version: .*$", re.M), "# Protobuf Python Version: <protoc>"),
    (re.compile(r"(ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,)\s*\d+,\s*\d+,\s*\d+,\s*'[^']*',"),
     r"\1 <protoc>,"),
)


def _without_tool_stamps(text: str) -> str:
    for pattern, placeholder in _TOOL_STAMPS:
        text = pattern.sub(placeholder, text)
    return text


def test_generated_code_is_up_to_date(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools (dev dependency) regenerates the gencode")
    r = subprocess.run(["sh", str(REPO / "tools" / "gen_proto.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "OUT": str(tmp_path)}, timeout=120)
    assert r.returncode == 0, r.stderr
    committed = REPO / "src" / "snarkd" / "daemon" / "proto"
    for name in ("snarkd_pb2.py", "snarkd_pb2.pyi", "snarkd_pb2_grpc.py"):
        fresh, kept = (tmp_path / name).read_text(), (committed / name).read_text()
        assert _without_tool_stamps(fresh) == _without_tool_stamps(kept), f"{name} is stale: run tools/gen_proto.sh"


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
