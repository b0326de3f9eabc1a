#!/usr/bin/env python3
"""Mutation fuzz of snarkd's cache files: the wasmtime module cache (.cwasm), the native witness program
(.wprog) and the prepared-key sidecar (.prep), on the bundled BN254 chain example.

    python bench/cache_fuzz.py [--kinds cwasm,wprog,prep] [--count 10000] [--bits] [--seed 1] [--out FILE]

Each case writes a mutated copy of a good cache file where snarkd looks for it (a bit flipped, bytes
overwritten, the file cut or extended, two ranges swapped, a range zeroed; --bits: every single-bit flip of
the file, in order), then loads it as snarkd does. A case passes when the file is refused, or when it is
accepted and the result is right: the witness equal to snarkjs's (examples/chain-bn128/chain.wtns, from
`snarkjs wtns calculate`), the proof verified. The cases run in a child process, so a crash (a signal) is
seen, counted and the run goes on in a new child; a case over 20 s is a hang. Prints and writes the tally;
exit 1 on any crash, hang or wrong result.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
EXAMPLE = REPO / "examples" / "chain-bn128"
KINDS = ("cwasm", "wprog", "prep")
CASE_TIMEOUT = 20.0


def mutate(data: bytes, rnd: random.Random) -> bytes:
    b = bytearray(data)
    op = rnd.randrange(6)
    if op == 0 or not b:  # one bit
        if b:
            i = rnd.randrange(len(b) * 8)
            b[i // 8] ^= 1 << (i % 8)
    elif op == 1:  # a few bytes overwritten
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
    elif op == 2:  # cut
        del b[rnd.randrange(len(b)):]
    elif op == 3:  # extended
        b += rnd.randbytes(rnd.randint(1, 4096))
    elif op == 4:  # two ranges swapped
        w = rnd.randint(1, max(1, len(b) // 8))
        i, j = rnd.randrange(len(b) - w + 1), rnd.randrange(len(b) - w + 1)
        b[i : i + w], b[j : j + w] = data[j : j + w], data[i : i + w]
    else:  # a range zeroed
        i, w = rnd.randrange(len(b)), rnd.randint(1, 256)
        b[i : i + w] = bytes(len(b[i : i + w]))
    return bytes(b)


class Target:
    """One kind of cache file: made once (`path`, `good`), then `check()` after each mutation: 'refused' or
    'accepted' (the result checked; AssertionError when wrong)."""

    def __init__(self, kind: str, work: Path):
        from snarkd.formats.wtns import read_wtns

        self.kind, self.work = kind, work
        work.mkdir(mode=0o700, parents=True)
        self.wasm = work / "chain.wasm"
        shutil.copy(EXAMPLE / "chain.wasm", self.wasm)
        self.inputs = json.loads((EXAMPLE / "input.json").read_text())
        self.expected = read_wtns(EXAMPLE / "chain.wtns").values  # snarkjs wtns calculate's
        getattr(self, f"_make_{kind}")()
        self.good = self.path.read_bytes()

    # -- .cwasm
    def _make_cwasm(self):
        from snarkd.witness.calculator import WitnessCalculator

        WitnessCalculator(self.wasm, cache=str(self.work / "cache"))
        (self.path,) = (self.work / "cache").glob("*.cwasm")

    def _check_cwasm(self) -> str:
        from snarkd.witness import wasm_runtime
        from snarkd.witness.calculator import WitnessCalculator

        module, _ = wasm_runtime._load_cached(self.wasm.read_bytes(), self.path.parent)
        if module is None:
            return "refused"
        self._same(WitnessCalculator(self.wasm, cache=str(self.path.parent)).calculate(self.inputs).values)
        return "accepted"

    # -- .wprog
    def _make_wprog(self):
        from snarkd.witness.native import NativeCalculator

        self.calc = NativeCalculator(self.wasm, cache=False)
        self.path = self.wasm.with_name("chain.wasm.wprog")

    def _check_wprog(self) -> str:
        from snarkd.witness import program_file
        from snarkd.witness.native import NativeCalculator

        try:
            program_file.read(self.path, self.calc._ident)
        except program_file.ProgramFileError:
            return "refused"
        calc = NativeCalculator(self.wasm, cache=False)
        self._same(calc.calculate(self.inputs).values)
        return "accepted" if calc.loaded_from == self.path and calc.build_ms == 0 else "refused"

    # -- .prep
    def _make_prep(self):
        from snarkd.prover import prepared

        self.zkey = self.work / "chain.zkey"
        shutil.copy(EXAMPLE / "chain.zkey", self.zkey)
        self.path = Path(prepared.build(self.zkey))
        self.vk = json.loads((EXAMPLE / "vk.json").read_text())

    def _check_prep(self) -> str:
        from snarkd.formats.zkey_layout import open_zkey, read_layout
        from snarkd.prover import prepared
        from snarkd.prover.oneshot import prove_files
        from snarkd.verifier.groth16 import verify

        bf = open_zkey(self.zkey)
        try:
            lay = read_layout(bf)
            side = prepared.load(self.zkey, bf, lay.curve.name, lay.n_vars, lay.domain_size, rebuild=False)
        finally:
            bf.close()
        if side is None:
            return "refused"
        side.close()
        proof = prove_files(self.zkey, EXAMPLE / "chain.wtns", verify=False)  # no self-check to hide a wrong one
        assert verify(self.vk, proof.public, proof.proof), "invalid proof"
        return "accepted"

    def _same(self, values) -> None:
        import numpy as np

        got, want = np.asarray(values), np.asarray(self.expected)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), "wrong witness"

    def check(self) -> str:
        return getattr(self, f"_check_{self.kind}")()


def _child(kind: str, work: str, generation: int, conn) -> None:
    """Runs cases (index, bytes) in order; reports (index, outcome) for each."""
    os.environ["XDG_CACHE_HOME"] = str(Path(work) / "xdg")  # the per-user secret, in the run's own folder
    try:
        target = Target(kind, Path(work) / f"{kind}-{generation}")  # a fresh folder per child
    except BaseException:
        import traceback

        conn.send(("failed", traceback.format_exc(), b""))
        raise
    conn.send(("ready", len(target.good), target.good))
    for index, data in iter(conn.recv, None):
        target.path.unlink(missing_ok=True)
        target.path.write_bytes(data)
        try:
            outcome = target.check()
        except AssertionError as exc:
            outcome = f"wrong: {exc}"
        except Exception as exc:  # anything raised is a refusal unless it escapes the caller's handling
            outcome = f"raised: {type(exc).__name__}: {exc}"
        conn.send((index, outcome))


def run(kinds=KINDS, count: int = 10000, seed: int = 1, bits: bool = False, bit_step: int = 1) -> dict:
    ctx = mp.get_context("spawn")  # not fork: the caller (a pytest worker) may hold native threads
    work = tempfile.mkdtemp(prefix="cachefuzz")
    report = {"count": count, "seed": seed, "bits": bits, "kinds": {}}
    for kind in kinds:
        t0 = time.monotonic()
        tally = {"refused": 0, "accepted": 0, "wrong": 0, "raised": 0, "crashed": 0, "hung": 0}
        problems = []
        rnd = random.Random(f"{seed}-{kind}")
        good = None
        index = 0
        total = None
        generation = 0
        while total is None or index < total:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_child, args=(kind, work, generation, child))
            proc.start()
            generation += 1
            try:
                msg = parent.recv() if parent.poll(120) else None
            except EOFError:
                msg = None
            if msg is None or msg[0] != "ready":
                raise RuntimeError(f"{kind}: the child did not start" + (f":\n{msg[1]}" if msg else ""))
            _, size, good = msg
            total = size * 8 // bit_step if bits else count
            while index < total:
                if bits:
                    bit = index * bit_step
                    case = bytearray(good)
                    case[bit // 8] ^= 1 << (bit % 8)
                    case = bytes(case)
                else:
                    case = mutate(good, rnd)
                    while case == good:  # a no-op mutation (a range swapped with itself...): draw again
                        case = mutate(good, rnd)
                parent.send((index, case))
                if not parent.poll(CASE_TIMEOUT):
                    tally["hung"] += 1
                    problems.append((index, "hung"))
                    proc.kill()
                    index += 1
                    break
                try:
                    _, outcome = parent.recv()
                except EOFError:
                    proc.join()
                    tally["crashed"] += 1
                    problems.append((index, f"crashed: exit {proc.exitcode}"))
                    index += 1
                    break
                key = outcome.split(":")[0]
                tally[key] += 1
                if key not in ("refused", "accepted"):
                    problems.append((index, outcome))
                index += 1
            else:
                parent.send(None)
            proc.join(30)
        report["kinds"][kind] = {"cases": total, "file_bytes": len(good), "tally": tally,
                                 "problems": problems[:50], "seconds": round(time.monotonic() - t0, 1)}
    shutil.rmtree(work, ignore_errors=True)
    report["ok"] = all(not (k["tally"]["wrong"] or k["tally"]["raised"] or k["tally"]["crashed"] or k["tally"]["hung"])
                       for k in report["kinds"].values())
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bits", action="store_true", help="every single-bit flip instead of random mutations")
    ap.add_argument("--out")
    args = ap.parse_args()
    report = run(args.kinds.split(","), args.count, args.seed, args.bits)
    report["command"] = "python bench/cache_fuzz.py " + " ".join(sys.argv[1:])
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
