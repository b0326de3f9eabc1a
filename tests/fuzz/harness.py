"""Fuzz runner: N mutated inputs per target, in a process of its own, with the
resource checks a single case cannot make.

    python tests/fuzz/harness.py --target zkey --n 10000 [--seed 1] [--json out.json]
    python tests/fuzz/harness.py --target all --n 10000          # the documented long run
    python tests/fuzz/harness.py --target zkey --engine atheris --n 10000   # coverage-guided
    SNARKD_FUZZ_PROVE_SUBPROCESS=1 python tests/fuzz/harness.py --target prove --n 300  # `python -m snarkd prove` per input

Per case: a deadline (faulthandler kills the process and prints where it hung);
a memory cap on the whole run (RLIMIT_DATA, --mem-mib): an unbounded allocation
fails as MemoryError, a finding. After the run: open file descriptors and
mappings of the fuzzed files must be back where they were after warm-up (no
leaks), and, with node present, the verify target's cases and every proof that
`snarkd prove` wrote with exit 0 go to snarkjs (tests/fuzz/differential.py).

Prints one JSON object: inputs, outcomes, findings (with the mutation and a
replay command), fds, leaked mappings, peak RSS, seconds, and the differential
numbers. Exit status 0 when there is no finding. Case i of a target is a pure
function of (--seed, target, i): `--start I --n 1` replays it; `--save DIR`
writes each finding's input there (the corpus under tests/fuzz/corpus/ came so).
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import targets as T  # noqa: E402

TRACE = bool(os.environ.get("SNARKD_FUZZ_TRACE"))


def _mapped_files(workdir: Path) -> list[str]:
    """Files under workdir that are still memory-mapped by this process."""
    try:
        with open("/proc/self/maps") as fh:
            return sorted({ln.split(None, 5)[5].strip() for ln in fh if str(workdir) in ln and len(ln.split(None, 5)) == 6})
    except OSError:
        return []


# wasmtime keeps a memfd per instantiated module (its memory image) after the calculator is closed: the wasm
# target's differential check instantiates a new module per case, so its count says nothing of snarkd's own
# descriptors there (reported apart, as wasmtime_images). Other targets count them.
NOT_COUNTED = {"wasm": "/memfd:wasm-memory-image"}


def _num_fds(target: str = "") -> int:
    skip = NOT_COUNTED.get(target)
    if skip is None:
        return psutil.Process().num_fds()
    return sum(1 for fd in Path("/proc/self/fd").iterdir() if not _link(fd).startswith(skip))


def _link(fd: Path) -> str:
    try:
        return str(fd.readlink())
    except OSError:
        return ""


class Run:
    def __init__(self, name: str, seed: int, workdir: Path, timeout: float, save: Path | None):
        self.name, self.seed, self.workdir, self.timeout, self.save = name, seed, workdir, timeout, save
        self.target = T.TARGETS[name](workdir)
        self.outcomes: Counter = Counter()
        self.findings: list[dict] = []
        self.kinds: Counter = Counter()
        self.extra: dict = {}
        self.cases_for_snarkjs: list[tuple[T.Case, dict]] = []
        self.unchecked: list[dict] = []  # prove: proofs the self-check stopped, as --no-verify writes them

    def finding(self, case: T.Case, text: str) -> None:
        self.outcomes["finding"] += 1
        entry = {"index": case.index, "mutation": case.mutation, "finding": text[-1500:],
                 "replay": f"python tests/fuzz/harness.py --target {self.name} --seed {self.seed} --start {case.index} --n 1"}
        self.findings.append(entry)
        if self.save is not None:
            self.save.mkdir(parents=True, exist_ok=True)
            stem = self.save / f"{self.name}-{self.seed}-{case.index}"
            stem.with_suffix(".bin").write_bytes(case.data)
            stem.with_suffix(".meta").write_text(json.dumps({k: v for k, v in case.meta.items() if k != "result"}))

    def one(self, case: T.Case) -> None:
        if TRACE:  # which case a crash or a hang happened in (both end the process)
            print(f"case {case.index}: {case.mutation}", file=sys.stderr, flush=True)
        faulthandler.dump_traceback_later(self.timeout, exit=True)
        try:
            outcome = self.target.run(case)
        except T.Finding as f:
            self.finding(case, str(f))
            return
        except MemoryError:
            self.finding(case, "MemoryError: an allocation beyond the run's memory cap")
            return
        except Exception:  # noqa: BLE001 -- any other exception is what the fuzzer looks for
            self.finding(case, traceback.format_exc())
            return
        finally:
            faulthandler.cancel_dump_traceback_later()
        self.outcomes[outcome] += 1
        self.kinds[case.mutation.split("+")[0] + " -> " + outcome] += 1
        if self.name == "verify":
            self.cases_for_snarkjs.append((case, {"ours": outcome}))
        elif self.name == "prove" and outcome == "exit0":
            self.cases_for_snarkjs.append((case, {"ours": "valid"}))
        elif self.name == "prove" and "unchecked" in case.meta:
            self.unchecked.append((case.mutation, case.meta.pop("unchecked")))

    def _q(self, case: T.Case) -> int:
        """The base field of the case's seed curve (the classifier's 'coordinate >= q')."""
        from snarkd.curves.params import curve_by_name

        seed = self.target.seeds[case.meta["seed"]]
        return curve_by_name(seed[0] if isinstance(seed, tuple) and isinstance(seed[0], str) else seed[0].curve).q

    def differential(self) -> None:
        import differential as D

        if not self.cases_for_snarkjs and not self.unchecked:
            return
        if shutil.which("node") is None:
            self.extra["snarkjs"] = "skipped: node not found"
            return
        if self.name == "verify":
            texts = [T.VerifyTarget.texts(c) for c, _ in self.cases_for_snarkjs]
        else:
            import base64

            texts = [{k: base64.b64decode(v) for k, v in c.meta["result"].items()} for c, _ in self.cases_for_snarkjs]
        t0 = time.perf_counter()
        theirs = D.snarkjs_verify(texts)
        # snarkjs's answer can depend on the cases before it in one node process (its
        # wasm curve state); `snarkjs groth16 verify` runs one case per process, so a
        # disagreement that would be a finding is asked again alone, and that answer counts.
        stats: Counter = Counter()
        for j, ((case, info), th) in enumerate(zip(self.cases_for_snarkjs, theirs)):
            verdict = D.compare(info["ours"], th)
            if verdict == "snarkd_only_accepts" or (
                    verdict == "snarkjs_only_accepts" and D.classify(texts[j], self._q(case)) == "unexplained"):
                [alone] = D.snarkjs_verify([texts[j]])
                stats["rechecked_alone"] += 1
                if alone != th:
                    stats["changed_when_alone"] += 1
                    theirs[j] = alone
        classes: Counter = Counter()
        for (case, info), txt, th in zip(self.cases_for_snarkjs, texts, theirs):
            verdict = D.compare(info["ours"], th)
            stats[verdict] += 1
            stats[f"snarkjs_{th}"] += 1
            if verdict == "snarkd_only_accepts":
                what = "silent wrong proof: snarkd prove exited 0, snarkjs rejects the proof" if self.name == "prove" \
                    else "snarkd accepts what snarkjs rejects"
                self.finding(case, f"{what} (snarkjs: {th})")
            elif verdict == "snarkjs_only_accepts":
                cls = D.classify(txt, self._q(case))
                classes[cls] += 1
                if cls == "unexplained":
                    self.finding(case, f"snarkjs accepts, snarkd says {info['ours']}, and no documented difference explains it")
        self.extra["snarkjs"] = {"cases": len(theirs), **dict(stats), "classified_differences": dict(classes),
                                 "seconds": round(time.perf_counter() - t0, 1)}
        if self.unchecked:
            import base64

            verdicts = D.snarkjs_verify([{k: base64.b64decode(v) for k, v in u.items()} for _, u in self.unchecked])
            # each 'invalid' here was an exit-0 silent wrong proof before the self-check; a 'valid'
            # one is a refusal the undamaged key would not have needed (damage the prover never reads)
            valid_by = Counter(m for (m, _), v in zip(self.unchecked, verdicts) if v == "valid")
            self.extra["stopped_by_self_check"] = {"proofs": len(self.unchecked), "snarkjs": dict(Counter(verdicts)),
                                                   "valid_anyway_by_mutation": dict(valid_by)}


def run_seeded(name: str, n: int, seed: int, start: int, timeout: float, save: Path | None) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix=f"snarkd-fuzz-{name}-"))
    t0 = time.perf_counter()
    try:
        run = Run(name, seed, workdir, timeout, save)
        setup_s = time.perf_counter() - t0
        fds_base = maps_base = None
        warm = min(20, max(n - 1, 0))
        t1 = time.perf_counter()
        for i in range(start, start + n):
            rng = random.Random(f"{seed}:{name}:{i}")
            run.one(run.target.make(i, rng))
            if i == start + warm:
                gc.collect()
                fds_base, maps_base = _num_fds(name), _mapped_files(workdir)
        fuzz_s = time.perf_counter() - t1
        gc.collect()
        fds_end, maps_end = _num_fds(name), _mapped_files(workdir)
        result = {"target": name, "seed": seed, "start": start, "inputs": n, "outcomes": dict(run.outcomes),
                  "by_mutation": dict(sorted(run.kinds.items())), "fds_after_warmup": fds_base, "fds_end": fds_end,
                  "mapped_case_files_end": maps_end,
                  "setup_s": round(setup_s, 1), "fuzz_s": round(fuzz_s, 1)}
        if fds_base is not None and fds_end > fds_base:
            run.findings.append({"finding": f"file descriptors leaked: {fds_base} after warm-up, {fds_end} at the end"})
        if maps_base is not None and len(maps_end) > len(maps_base):
            run.findings.append({"finding": f"mappings of fuzzed files left behind: {maps_end}"})
        run.differential()
        result.update(run.extra)
        result["findings"] = run.findings
        result["snarkd"] = str(Path(sys.modules["snarkd"].__file__).parent)  # which build was fuzzed
        result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        result["seconds"] = round(time.perf_counter() - t0, 1)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_atheris(name: str, n: int, seed: int, timeout: float) -> None:
    """Coverage-guided: libFuzzer mutates the seeds' bytes (binary targets). A
    finding raises, and libFuzzer saves the input as crash-* in the cwd."""
    import atheris

    with atheris.instrument_imports():
        import snarkd.formats.binfile  # noqa: F401
        import snarkd.formats.r1cs  # noqa: F401
        import snarkd.formats.wtns  # noqa: F401
        import snarkd.formats.zkey  # noqa: F401  (imported here to be instrumented)
    workdir = Path(tempfile.mkdtemp(prefix=f"snarkd-atheris-{name}-"))
    target = T.TARGETS[name](workdir)
    if not isinstance(target, T.BinaryTarget):
        raise SystemExit("--engine atheris: binary targets only (zkey, wtns, r1cs)")
    corpus = workdir / "corpus"
    corpus.mkdir()
    for k, blob in enumerate(target.blobs):
        (corpus / f"seed{k}").write_bytes(blob)
    count = [0]

    def test_one(data: bytes) -> None:
        count[0] += 1
        case = T.Case(count[0], data, "atheris", {"seed": count[0] % len(target.seeds)})
        try:
            target.run(case)
        except T.Finding as f:
            raise RuntimeError(f"finding: {f}") from None

    atheris.Setup([sys.argv[0], f"-runs={n}", f"-seed={seed}", f"-timeout={int(timeout)}", "-rss_limit_mb=4096",
                   str(corpus)], test_one)
    atheris.Fuzz()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", required=True, choices=[*T.TARGETS, "all"])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take before it counts as a hang")
    ap.add_argument("--mem-mib", type=int, default=4096, help="RLIMIT_DATA for the run (0: none)")
    ap.add_argument("--engine", choices=("seeded", "atheris"), default="seeded")
    ap.add_argument("--save", type=Path, help="write each finding's input here")
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args(argv)
    faulthandler.enable()
    # Fuzz under the worst recursion limit a dependency sets (py_ecc: 100,000), where
    # any recursive parse of deep input overflows the C stack instead of raising.
    import py_ecc  # noqa: F401
    if args.mem_mib:
        cap = args.mem_mib << 20
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    if args.engine == "atheris":
        run_atheris(args.target, args.n, args.seed, args.timeout)
        return 0
    names = list(T.TARGETS) if args.target == "all" else [args.target]
    results = [run_seeded(nm, args.n, args.seed, args.start, args.timeout, args.save) for nm in names]
    out = results[0] if len(results) == 1 else results
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 1 if any(r["findings"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
