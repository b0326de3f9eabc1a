"""The fuzz targets: for each, the seeds (fixture files) and `run(case)` on one mutated input.

A target's `make(i, rng)` builds case i (bytes plus what was mutated), and
`run(case)` feeds it to snarkd and returns an outcome string. The contract every
input must meet: it ends in a result or in a `SnarkdError` whose message names
the input (file or field). Anything else -- another exception, an error that
does not say where, a proof written with exit 0 that snarkjs rejects -- is a
`Finding`. Crashes, hangs, fd and mapping leaks are caught by harness.py.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
# SNARKD_FUZZ_SRC: another build of snarkd to fuzz (bench/fuzz_wasm_recorder.sh: a sanitizer build of the
# native witness module)
for p in (str(HERE), str(TESTS), os.environ.get("SNARKD_FUZZ_SRC") or str(TESTS.parent / "src")):
    if p not in sys.path:
        sys.path.insert(0, p)

import mutate  # noqa: E402

from snarkd.errors import FormatError, SnarkdError  # noqa: E402

CIRCUITS = ("chain", "many_public", "no_public")


class Finding(Exception):
    """An input that broke the contract; str() says how."""


@dataclass
class Case:
    index: int
    data: bytes  # the mutated input (for verify: a JSON object of the three texts)
    mutation: str
    meta: dict = field(default_factory=dict)


def _seed_cases(circuits=CIRCUITS):
    from cases import CURVES, build_case

    return [build_case(name, curve) for curve in CURVES for name in circuits]


def _expect_named(exc: SnarkdError, *names: str) -> str:
    """The error must say which input it is about."""
    msg = str(exc)
    if not any(n and n in msg for n in names):
        raise Finding(f"error does not name the input ({', '.join(names)}): {msg!r}")
    return "rejected"


class BinaryTarget:
    """zkey, wtns and r1cs readers on mutated files."""

    ext = ""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.seeds = _seed_cases()
        self.blobs = [Path(self.seed_path(c)).read_bytes() for c in self.seeds]
        self.path = workdir / f"case.{self.ext}"

    def seed_path(self, case) -> Path:
        raise NotImplementedError

    def make(self, i: int, rng: random.Random) -> Case:
        k = rng.randrange(len(self.seeds))
        n8 = 48 if self.seeds[k].curve == "bls12381" and self.ext == "zkey" else 32
        others = [b for j, b in enumerate(self.blobs) if j != k]
        data, what = mutate.mutate_binary(self.blobs[k], rng, n8, others)
        return Case(i, data, what, {"seed": k})

    def write(self, case: Case) -> Path:
        self.path.write_bytes(case.data)
        return self.path


class ZkeyTarget(BinaryTarget):
    ext = "zkey"

    def seed_path(self, c):
        return c.zkey

    def run(self, case: Case) -> str:
        from snarkd.formats.zkey import read_zkey
        from snarkd.verifier.key_check import check_key_points

        path = self.write(case)
        rng = random.Random(case.index)
        try:
            z = read_zkey(path, check_points=rng.random() < 0.3)
        except SnarkdError as exc:
            return _expect_named(exc, str(path))
        with z:
            results = check_key_points(z, subgroup=True, threads=1)
            if rng.random() < 0.2:
                from snarkd.formats.zkey import vk_json

                vk_json(z)
        return "parsed" if all(r.ok for r in results) else "parsed_bad_points"


class WtnsTarget(BinaryTarget):
    ext = "wtns"

    def seed_path(self, c):
        return c.wtns

    def run(self, case: Case) -> str:
        from snarkd.formats.wtns import check_witness, parse_wtns, read_wtns
        from snarkd.formats.zkey import read_zkey

        path = self.write(case)
        try:
            w = read_wtns(path)
        except SnarkdError as exc:
            try:
                parse_wtns(case.data, "<bytes>")
            except SnarkdError:
                return _expect_named(exc, str(path))
            raise Finding(f"read_wtns rejects ({exc}) but parse_wtns accepts the same bytes")
        w2 = parse_wtns(case.data, "<bytes>")
        if w2.prime != w.prime or (w2.values != w.values).any():
            raise Finding("read_wtns and parse_wtns disagree")
        with read_zkey(self.seeds[case.meta["seed"]].zkey) as z:
            try:
                check_witness(w, z, str(path))
            except SnarkdError as exc:
                return _expect_named(exc, str(path))
        return "parsed"


class R1csTarget(BinaryTarget):
    ext = "r1cs"

    def seed_path(self, c):
        return c.r1cs

    def run(self, case: Case) -> str:
        from snarkd.formats.r1cs import read_r1cs
        from snarkd.formats.wtns import read_wtns
        from snarkd.verifier.constraints import check_witness_fits_r1cs, first_unsatisfied

        path = self.write(case)
        try:
            r = read_r1cs(path)
        except SnarkdError as exc:
            return _expect_named(exc, str(path))
        w = read_wtns(self.seeds[case.meta["seed"]].wtns)
        try:
            check_witness_fits_r1cs(r, w)
        except SnarkdError as exc:
            return _expect_named(exc, str(path))
        bad = first_unsatisfied(r, w, threads=1)
        return "satisfied" if bad is None else "unsatisfied"


# -- verify: proof / vk / public JSON ----------------------------------------------


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


class VerifyTarget:
    """snarkd's verifier on mutated (vk, public, proof); the differential test
    hands the same texts to snarkjs (snarkjs_verify.mjs)."""

    def __init__(self, workdir: Path):
        from snarkd.formats.wtns import read_wtns
        from snarkd.prover import ProvingKey, prove

        self.seeds = []
        for c in _seed_cases():
            with ProvingKey.load(c.zkey) as key:
                p = prove(key, read_wtns(c.wtns), threads=1)
            self.seeds.append((c.curve, json.loads(c.vk.read_text()), p.public, p.proof))

    def make(self, i: int, rng: random.Random) -> Case:
        from snarkd.curves.params import curve_by_name

        k = rng.randrange(len(self.seeds))
        curve, vk, public, proof = self.seeds[k]
        cv = curve_by_name(curve)
        objs = {"vk": vk, "public": public, "proof": proof}
        texts = {n: json.dumps(o).encode() for n, o in objs.items()}
        roll = rng.random()
        if roll < 0.04:
            what = "control"
        elif roll < 0.18:
            which = rng.choice(["vk", "public", "proof"])
            texts[which], what = mutate.mutate_text(texts[which], rng)
            what = f"{which}:{what}"
        else:
            names = []
            for which in rng.sample(["proof", "proof", "vk", "public"], rng.choice([1, 1, 1, 2])):
                objs[which], kind = mutate.mutate_json(objs[which], rng, cv.q, cv.r)
                texts[which] = mutate.dumps(objs[which]).encode()
                names.append(f"{which}:{kind}")
            if rng.random() < 0.05:  # a valid proof of another circuit or curve
                _, _, pub2, proof2 = self.seeds[rng.randrange(len(self.seeds))]
                texts["proof"], texts["public"] = json.dumps(proof2).encode(), json.dumps(pub2).encode()
                names.append("other_seed")
            what = "+".join(names)
        data = json.dumps({n: _b64(t) for n, t in texts.items()}).encode()
        return Case(i, data, what, {"seed": k})

    @staticmethod
    def texts(case: Case) -> dict[str, bytes]:
        return {n: base64.b64decode(v) for n, v in json.loads(case.data).items()}

    def run(self, case: Case) -> str:
        from snarkd.verifier.groth16 import parse_json, verify

        t = self.texts(case)
        names = ("vk.json", "public.json", "proof.json")
        try:
            vk = parse_json(t["vk"], names[0], "verification key")
            public = parse_json(t["public"], names[1], "public signals")
            proof = parse_json(t["proof"], names[2], "proof")
            ok = verify(vk, public, proof, names=names)
        except SnarkdError as exc:
            _expect_named(exc, *names)
            return "error"
        if ok is not True and ok is not False:
            raise Finding(f"verify returned {ok!r}")
        return "valid" if ok else "invalid"


# -- inputs JSON -> witness ---------------------------------------------------------


class InputsTarget:
    """input.json through load_input_json and the witness calculator."""

    def __init__(self, workdir: Path):
        from cases import SPECS, build_case
        from snarkd.witness import WitnessCalculator

        self.seeds = []
        for name in ("chain", "many_public", "circomlib_cmp"):
            for curve in ("bn128", "bls12381"):
                c = build_case(name, curve)
                self.seeds.append((c, WitnessCalculator(c.circuit.wasm, max_instances=1), SPECS[name][2]))
        self.path = workdir / "input.json"

    def make(self, i: int, rng: random.Random) -> Case:
        from snarkd.curves.params import curve_by_name

        k = rng.randrange(len(self.seeds))
        c, _, inputs = self.seeds[k]
        cv = curve_by_name(c.curve)
        if rng.random() < 0.2:
            data, what = mutate.mutate_text(json.dumps(inputs).encode(), rng)
        else:
            obj, what = mutate.mutate_json(inputs, rng, cv.r, cv.r)
            data = mutate.dumps(obj, what).encode()
        return Case(i, data, what, {"seed": k})

    def run(self, case: Case) -> str:
        from snarkd.witness.inputs import load_input_json

        self.path.write_bytes(case.data)
        _, calc, _ = self.seeds[case.meta["seed"]]
        try:
            obj = load_input_json(self.path)
        except SnarkdError as exc:
            return _expect_named(exc, str(self.path))
        try:
            calc.calculate(obj)
        except SnarkdError:
            return "rejected"  # errors name the signal or the circuit
        return "witness"


# -- snarkd prove on damaged keys and witnesses -----------------------------------------


class ProveTarget:
    """`snarkd prove` (in process, as the CLI runs) on damaged keys and witnesses.
    Every exit-0 proof is checked by snarkjs against the undamaged key's vk."""

    def __init__(self, workdir: Path):
        from snarkd.curves.params import curve_by_name

        self.workdir = workdir
        self.seeds = []
        for c in _seed_cases(("chain", "many_public")):
            other = c.circuit.witness({**c.inputs, **({"k": 7} if "k" in c.inputs else {"secret": 11})})
            self.seeds.append((c, c.zkey.read_bytes(), c.wtns.read_bytes(), other.read_bytes(), curve_by_name(c.curve)))
        self.subprocess = bool(os.environ.get("SNARKD_FUZZ_PROVE_SUBPROCESS"))
        self.key, self.wtns = workdir / "key.zkey", workdir / "w.wtns"
        self.proof, self.public = workdir / "proof.json", workdir / "public.json"

    def make(self, i: int, rng: random.Random) -> Case:
        k = rng.randrange(len(self.seeds))
        c, zk, wt, other, cv = self.seeds[k]
        if rng.random() < 0.5:
            data, what = mutate.damage_zkey(zk, rng, cv.n8q) if rng.random() < 0.75 else mutate.mutate_binary(zk, rng, cv.n8q)
            return Case(i, data, f"key:{what}", {"seed": k, "part": "key"})
        data, what = mutate.damage_wtns(wt, rng, cv.r, other) if rng.random() < 0.75 else mutate.mutate_binary(wt, rng, 32)
        return Case(i, data, f"wtns:{what}", {"seed": k, "part": "wtns"})

    def run(self, case: Case) -> str:
        from snarkd.cli import main

        c, zk, wt, _, _ = self.seeds[case.meta["seed"]]
        self.key.write_bytes(case.data if case.meta["part"] == "key" else zk)
        self.wtns.write_bytes(case.data if case.meta["part"] == "wtns" else wt)
        for p in (self.proof, self.public):
            p.unlink(missing_ok=True)
        argv = ["prove", str(self.key), str(self.wtns), str(self.proof), str(self.public), "--threads", "1"]
        if self.subprocess:  # the installed command line, one process per input
            proc = subprocess.run([sys.executable, "-m", "snarkd", *argv], capture_output=True, text=True, timeout=120)
            rc, msg = proc.returncode, proc.stderr
        else:
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = main(argv)
            msg = err.getvalue()
        written = self.proof.exists() or self.public.exists()
        if rc == 0:
            case.meta["result"] = {"vk": _b64(c.vk.read_bytes()), "public": _b64(self.public.read_bytes()),
                                   "proof": _b64(self.proof.read_bytes())}
            return "exit0"
        if written:
            raise Finding(f"exit {rc} but a proof or public file was written")
        if rc == 3:
            _expect_named(FormatError("", msg), str(self.key), str(self.wtns))
            return "exit3"
        if rc == 4 and "self-check failed" in msg and "Traceback" not in msg:
            self._without_self_check(case)
            return "exit4_selfcheck"
        raise Finding(f"exit {rc}: {msg.strip()[-600:]}")


def _without_self_check_impl(self, case: Case) -> None:
    """What the same input gave before the self-check existed (--no-verify): the
    proof goes to snarkjs later; a rejection there is a silent wrong proof prevented."""
    from snarkd.cli import main

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["prove", "--no-verify", str(self.key), str(self.wtns), str(self.proof), str(self.public), "--threads", "1"])
    if rc == 0:
        c = self.seeds[case.meta["seed"]][0]
        case.meta["unchecked"] = {"vk": _b64(c.vk.read_bytes()), "public": _b64(self.public.read_bytes()),
                                  "proof": _b64(self.proof.read_bytes())}


ProveTarget._without_self_check = _without_self_check_impl


TARGETS = {"zkey": ZkeyTarget, "wtns": WtnsTarget, "r1cs": R1csTarget, "verify": VerifyTarget,
           "inputs": InputsTarget, "prove": ProveTarget}


def replay_file(target: str, path: Path) -> Case:
    """A corpus file as a case of `target` (its mutation name is the file name)."""
    return Case(0, path.read_bytes(), f"corpus:{path.name}", json.loads(path.with_suffix(".meta").read_text())
                if path.with_suffix(".meta").exists() else {"seed": 0})


def env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    return int(v) if v else default


import wasm_target  # noqa: E402  (last: it uses this module's Case, Finding, ...)

TARGETS["wasm"] = lambda workdir: wasm_target.WasmTarget(workdir)
