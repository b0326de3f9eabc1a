"""Fuzz of the gRPC request surface of a live daemon: every RPC gets malformed and mutated requests.

Each request must end in a clean status (OK or one of the codes a client can cause, never
INTERNAL or UNKNOWN), and the daemon must keep serving: health SERVING after the run, a
valid proof still verifies, no file descriptors gained, RSS bounded.

Four kinds of request, in turn, for each of the eleven RPCs (the two client streams get lists of chunks):
  raw        random bytes as the serialized message (mostly not protobuf at all)
  mutated    a valid request's bytes with bytes flipped, cut, repeated or spliced
  fields     a valid message with fields set to odd values (empty, huge, unicode, negative)
  witness    a ProveRequest/Submit whose witness bytes are mutated (header, sizes, values); for the
             streams, a stream of a mutated witness with right or wrong declared sizes, cut anywhere

CI runs a seeded slice (N_CI requests); the long run is this file as a script:

    python tests/fuzz/test_grpc_surface.py --n 10000 [--seed 1] [--json out.json]

Case i is a pure function of (seed, i), so a finding replays with --start I --n 1.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import grpc
import psutil
import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE.parent / "daemon", HERE.parent, HERE.parent.parent / "src"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from daemon_helpers import Reaper, Setup, env, free_port, wait_serving  # noqa: E402

import oracle  # noqa: E402
from snarkd.daemon.proto import snarkd_pb2 as pb  # noqa: E402

N_CI = 1000
CALL_TIMEOUT = 20  # no request needs more here; a DEADLINE_EXCEEDED is a finding
SERVICE = "/snarkd.v1.Prover/"
METHODS = {  # name -> request class
    "LoadKey": pb.LoadKeyRequest, "UnloadKey": pb.UnloadKeyRequest, "Prove": pb.ProveRequest,
    "Submit": pb.ProveRequest, "Await": pb.AwaitRequest, "Cancel": pb.CancelRequest,
    "Status": pb.StatusRequest, "Metrics": pb.MetricsRequest,
    "ProveStream": pb.ProveChunk, "SubmitStream": pb.ProveChunk,  # client streams: a list of chunks each
    "Aggregate": pb.AggregateRequest,
}
STREAMS = ("ProveStream", "SubmitStream")
# codes a client's request may cause; INTERNAL and UNKNOWN are findings
CLEAN = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
         grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.PERMISSION_DENIED,
         grpc.StatusCode.CANCELLED, grpc.StatusCode.FAILED_PRECONDITION}
ODD_STRINGS = ["", "chain", "../../etc/passwd", "/etc/shadow", "\x00", "é" * 300, "x" * 70000, "chain\n", " ",
               "unix:/tmp/x", "%s%n", "${HOME}", "~/x.zkey", "chain.zkey", "."]
ODD_NUMBERS = [0, -1, 1, 2**31 - 1, -2**31, float("nan"), float("inf"), -1e300, 1e-300, 3.5]


pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier (pytest -m "not slow" leaves it out)


def _repeated(f) -> bool:
    return f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED


def daemon_config(s: Setup, zkey: Path) -> Path:
    return s.write(workers=2, preload={"chain": zkey},
                   extra='[limits]\nmax_message = "1MiB"\nmax_queued_per_client = 64\nmax_partitions = 8\n'
                         f'max_inputs_bytes = "64KiB"\n[keys]\nallowed_dirs = ["{zkey.parent}"]\n')


class Fuzzer:
    def __init__(self, addr: str, witness: bytes, seed: int, zkey: Path):
        self.zkey = zkey
        self.channel = grpc.insecure_channel(addr, options=[("grpc.max_send_message_length", 4 << 20)])
        self.witness, self.seed = witness, seed
        self.calls = {m: (self.channel.stream_unary if m in STREAMS else self.channel.unary_unary)(SERVICE + m)
                      for m in METHODS}  # bytes in, bytes out
        self.outcomes: Counter = Counter()
        self.per_method: Counter = Counter()
        self.findings: list[dict] = []

    def reload(self) -> None:
        """Put the preloaded key back (the fuzz may unload it: no tokens here, so every caller is admin)."""
        try:
            self.calls["LoadKey"](pb.LoadKeyRequest(key_id="chain", path=str(self.zkey)).SerializeToString(), timeout=60)
        except grpc.RpcError:
            pass

    def valid(self, method: str, rng: random.Random):
        cls = METHODS[method]
        if cls is pb.ProveRequest:
            return pb.ProveRequest(key_id="chain", witness=self.witness, priority=rng.randint(-3, 3))
        if cls is pb.ProveChunk:
            return pb.ProveChunk(request=pb.ProveRequest(key_id="chain"), partition_bytes=[len(self.witness)],
                                 data=self.witness)
        if cls is pb.LoadKeyRequest:
            return pb.LoadKeyRequest(key_id=f"k{rng.randint(0, 9)}", path=rng.choice(ODD_STRINGS[:6]))
        if cls is pb.UnloadKeyRequest:
            return pb.UnloadKeyRequest(key_id=f"k{rng.randint(0, 9)}")
        if cls is pb.AwaitRequest:
            return pb.AwaitRequest(job_id=f"j{rng.randint(0, 20)}", timeout_s=0.05)
        if cls is pb.CancelRequest:
            return pb.CancelRequest(job_id=f"j{rng.randint(0, 20)}")
        if cls is pb.AggregateRequest:
            if rng.random() < 0.5:
                return pb.AggregateRequest(key_id="chain", job_ids=[f"j{rng.randint(0, 20)}" for _ in range(2)])
            return pb.AggregateRequest(key_id="chain", srs_path=rng.choice(ODD_STRINGS),
                                       proofs=[pb.InlineProof(proof_json='{"pi_a": []}', public_json="[]")] * 2)
        return cls()

    def mutate(self, data: bytes, rng: random.Random) -> bytes:
        b = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            op = rng.randrange(6)
            if op == 0 and b:
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
            elif op == 1 and b:
                i = rng.randrange(len(b))
                b[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
            elif op == 2 and b:
                del b[rng.randrange(len(b)):]
            elif op == 3 and b:
                i, j = sorted(rng.randrange(len(b) + 1) for _ in range(2))
                b[i:i] = b[i:j][:4096] * rng.randint(1, 3)
            elif op == 4:
                b[rng.randrange(len(b) + 1):0] = rng.randbytes(rng.randint(1, 16))
            elif op == 5 and len(b) > 8:  # an odd varint or field tag in the middle
                i = rng.randrange(len(b))
                b[i:i] = bytes([rng.randrange(256) | 0x80 for _ in range(rng.randint(1, 10))]) + b"\x01"
        return bytes(b)

    def odd_fields(self, method: str, rng: random.Random) -> bytes:
        msg = self.valid(method, rng)
        for f in msg.DESCRIPTOR.fields:
            if rng.random() < 0.5:
                continue
            try:
                if f.type == f.TYPE_STRING:
                    v = rng.choice(ODD_STRINGS)
                    if _repeated(f):
                        getattr(msg, f.name).extend([v] * rng.randint(0, 10))
                    else:
                        setattr(msg, f.name, v)
                elif f.type == f.TYPE_BYTES:
                    v = rng.choice([b"", b"wtns", rng.randbytes(rng.randint(0, 2000)), self.witness[: rng.randint(0, 200)]])
                    if _repeated(f):
                        getattr(msg, f.name).extend([v] * rng.randint(0, 12))
                    else:
                        setattr(msg, f.name, v)
                elif f.type in (f.TYPE_DOUBLE, f.TYPE_FLOAT):
                    setattr(msg, f.name, rng.choice(ODD_NUMBERS))
                elif f.type in (f.TYPE_INT32,):
                    setattr(msg, f.name, rng.choice([0, -1, 2**31 - 1, -2**31]))
            except (TypeError, ValueError):
                pass
        return msg.SerializeToString()

    def witness_case(self, rng: random.Random) -> bytes:
        w = self.mutate(self.witness, rng)
        if rng.random() < 0.3:
            return pb.ProveRequest(key_id="chain", witnesses=[w, self.witness][: rng.randint(1, 2)]).SerializeToString()
        return pb.ProveRequest(key_id="chain", witness=w).SerializeToString()

    def case(self, i: int) -> tuple[str, str, bytes]:
        rng = random.Random(f"{self.seed}:{i}")
        method = list(METHODS)[i % len(METHODS)]
        kind = ["raw", "mutated", "fields", "witness"][(i // len(METHODS)) % 4]
        if kind == "witness" and method not in ("Prove", "Submit", *STREAMS):
            kind = "mutated"
        if kind == "raw":
            data = rng.randbytes(rng.choice([0, 1, 2, 7, 64, 1000, 70000]))
        elif kind == "mutated":
            data = self.mutate(self.valid(method, rng).SerializeToString(), rng)
        elif kind == "fields":
            data = self.odd_fields(method, rng)
        elif method in STREAMS:
            data = self.stream_case(rng)
        else:
            data = self.witness_case(rng)
        if method in STREAMS and kind != "witness":
            data = [data] + [self.mutate(data, rng) for _ in range(rng.randint(0, 2))]
        return method, kind, data

    def stream_case(self, rng: random.Random) -> list:
        """A witness stream: the right sizes with mutated bytes, wrong sizes, chunks split anywhere."""
        w = self.mutate(self.witness, rng) if rng.random() < 0.7 else self.witness
        size = rng.choice([len(w), len(self.witness), len(w) + rng.randint(-50, 50), 0, 1 << 40])
        cuts = sorted(rng.randrange(len(w) + 1) for _ in range(rng.randint(0, 4)))
        pieces = [w[a:b] for a, b in zip([0, *cuts], [*cuts, len(w)])]
        head = pb.ProveChunk(request=pb.ProveRequest(key_id=rng.choice(["chain", "chain", "nope", ""])),
                             partition_bytes=[max(0, size)] * rng.choice([1, 1, 2]), data=pieces[0])
        out = [head.SerializeToString()] + [pb.ProveChunk(data=p).SerializeToString() for p in pieces[1:]]
        if rng.random() < 0.1:
            out.append(head.SerializeToString())  # the request twice
        return out

    def run(self, start: int, n: int) -> None:
        for i in range(start, start + n):
            method, kind, data = self.case(i)
            try:
                self.calls[method](iter(data) if method in STREAMS else data, timeout=CALL_TIMEOUT)
                code, details = grpc.StatusCode.OK, ""
            except grpc.RpcError as exc:
                code, details = exc.code(), exc.details() or ""
            self.outcomes[code.name] += 1
            self.per_method[method] += 1
            if method == "UnloadKey" and code == grpc.StatusCode.OK:  # a fuzzed request that named the key
                self.reload()
            if code not in CLEAN:
                self.findings.append({"case": i, "method": method, "kind": kind, "code": code.name,
                                      "details": details[:300], "replay": f"--seed {self.seed} --start {i} --n 1"})


def check_still_serving(addr: str, wtns: bytes, vk: dict, pid: int) -> None:
    from snarkd.daemon.client import Client
    from snarkd.verifier import verify

    with Client(addr, timeout=60) as c:
        assert c.health() == "SERVING"
        if "chain" not in {k["id"] for k in c.status()["keys"]}:  # a fuzzed UnloadKey may have hit it
            raise AssertionError("the preloaded key was unloaded by a fuzzed request")
        r = c.prove("chain", wtns)
        assert verify(vk, r.public, r.proof)


def fuzz(zkey: Path, wtns: Path, vk: dict, tmp: Path, n: int, seed: int = 1, start: int = 0) -> dict:
    reaper = Reaper()
    s = Setup(tmp, free_port())
    # the daemon logs to its log file; its stderr must not be a pipe nobody reads (a full pipe blocks logging)
    proc = subprocess.Popen([sys.executable, "-m", "snarkd", "serve", "--config", str(daemon_config(s, zkey))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
    reaper.procs.append(proc)
    try:
        wait_serving(s.addr, proc)
        daemon = psutil.Process(proc.pid)
        witness = wtns.read_bytes()
        f = Fuzzer(s.addr, witness, seed, zkey)
        f.run(0, 20)  # warm-up: every RPC twice, so lazily made threads and caches exist
        f.per_method.clear()
        f.outcomes.clear()
        fds0, rss0 = daemon.num_fds(), daemon.memory_info().rss
        t0 = time.monotonic()
        f.run(start, n)
        took = time.monotonic() - t0
        time.sleep(0.5)  # jobs the fuzz submitted finish
        check_still_serving(s.addr, witness, vk, proc.pid)
        fds1, rss1 = daemon.num_fds(), daemon.memory_info().rss
        f.channel.close()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        return {"requests": n, "seed": seed, "seconds": round(took, 1), "per_method": dict(f.per_method),
                "outcomes": dict(f.outcomes), "findings": f.findings, "fds_before": fds0, "fds_after": fds1,
                "rss_before_mib": round(rss0 / 2**20, 1), "rss_after_mib": round(rss1 / 2**20, 1),
                "exit_code": code, "log_errors": [ln for ln in s.log().splitlines() if " ERROR " in ln][:20]}
    finally:
        reaper.collect()


def test_grpc_surface_fuzz(chain_bn128, tmp_path):
    circ, wtns = chain_bn128
    out = fuzz(circ.zkey, wtns, json.loads(circ.vk.read_text()), tmp_path, N_CI)
    assert not out["findings"], json.dumps(out, indent=1)
    assert sum(out["per_method"].values()) == N_CI and len(out["per_method"]) == len(METHODS)
    assert out["fds_after"] <= out["fds_before"] + 4, out  # no descriptor per request
    assert out["exit_code"] == 0 and not out["log_errors"], out


@pytest.fixture(scope="module")
def chain_bn128():
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    return circ, circ.witness({"k": 3, "x": 2})


def main() -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--json", help="write the result there")
    a = ap.parse_args()
    source = oracle.load_circuit_source("chain.circom", N=10)
    circ = oracle.circuit(source, "chain", "bn128", power=6)
    wtns = circ.witness({"k": 3, "x": 2})
    with tempfile.TemporaryDirectory() as d:
        out = fuzz(circ.zkey, wtns, json.loads(circ.vk.read_text()), Path(d), a.n, a.seed, a.start)
    text = json.dumps(out, indent=1)
    print(text)
    if a.json:
        Path(a.json).write_text(text + "\n")
    return 1 if out["findings"] or out["log_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
