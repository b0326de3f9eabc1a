"""`snarkd prove`: rapidsnark's argument order, locally or through a running daemon."""

from __future__ import annotations

import os
import sys
import time
from types import SimpleNamespace  # the attributes argparse's Namespace would have (quick_args), without argparse

from snarkd.cli.quick import DIGITS, read_options
from snarkd.errors import InputError

ORDER = 10
LARGE_DOMAIN = 1 << 16  # a one-shot proof of a key this large takes seconds: show its progress


def register(sub) -> None:
    from snarkd.cli.parsing import add_epilog, add_remote_args

    p = add_epilog(sub.add_parser("prove", help="prove: KEY.zkey WITNESS.wtns PROOF.json PUBLIC.json (or --addr/--key through a daemon)"))
    p.add_argument("args", nargs="+", metavar="FILE", help="KEY.zkey WITNESS.wtns PROOF.json PUBLIC.json; with --key: WITNESS.wtns PROOF.json PUBLIC.json")
    p.add_argument("--threads", type=int, default=0, help="native threads (default: all cores)")
    p.add_argument("--timings", action="store_true", help="print per-phase milliseconds to stderr")
    p.add_argument("--check-points", action="store_true", help="check every key point is on its curve (slow on big keys)")
    p.add_argument("--backend", choices=("cpu", "cuda", "auto"), default=None,
                   help="where the sparse products, H and the MSMs run (default: [prove] backend, i.e. "
                        "$SNARKD_BACKEND, else cpu); cuda: the first GPU, auto: cuda when CuPy sees a GPU")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show the progress bar (default: on a terminal, for keys of domain 2^16 and up)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the self-check: by default each proof is verified against the key's own verification "
                        "data before anything is written (a few ms), and a proof that fails exits 4 and writes nothing")
    p.add_argument("--addr", help="prove through the daemon at HOST:PORT or unix:PATH")
    p.add_argument("--key", help="key id loaded in the daemon (with --addr)")
    p.add_argument("--deadline", metavar="S|@UNIX",
                   help="with --addr: the job must end within S seconds (or by the Unix time @UNIX); the daemon refuses it at once when its estimate says it cannot, and expires it when "
                   "it does not (exit 6 either way)")
    p.add_argument("--lane", metavar="NAME", help="with --addr: the daemon's lane to run in ([scheduler.lanes]; "
                   "default: the token's lane, else \"default\")")
    add_remote_args(p)
    p.set_defaults(func=run)


_FLAGS = {"--timings": ("timings", True), "--check-points": ("check_points", True), "--quiet": ("quiet", True),
          "-q": ("quiet", True), "--progress": ("progress", True), "--no-progress": ("progress", False),
          "--no-verify": ("verify", False)}
_VALUED = {"--threads": ("threads", DIGITS), "--backend": ("backend", ("cpu", "cuda", "auto"))}
_DEFAULTS = dict(threads=0, timings=False, check_points=False, backend=None, progress=None, quiet=False, verify=True,
                 addr=None, key=None, deadline=None, lane=None, tls_ca=None, tls_cert=None, tls_key=None,
                 tls_server_name=None, token_file=None)


def quick_args(argv: list[str]) -> SimpleNamespace | None:
    """`snarkd prove KEY WITNESS PROOF PUBLIC`'s arguments in their usual local forms (the four files in one run;
    whole option names, each at most once; --threads with digits, --backend with a choice), as argparse reads them,
    without importing or building argparse's parser (~5 ms of a one-shot proof's start-up, snarkd.cli.main); None for
    anything else (help, a daemon's options, an abbreviation, `--opt=value`, `--`, files split by options, a wrong
    count), which argparse then parses with its own messages and exit codes. tests/cli/test_prove_quick_args.py
    holds it to argparse's Namespace."""
    got = dict(_DEFAULTS)
    runs = read_options(argv, got, _FLAGS, _VALUED)
    if runs is None or len(runs) != 1 or len(runs[0]) != 4:  # nargs="+" takes one run of files
        return None
    files = runs[0]
    return SimpleNamespace(command="prove", args=files, func=run, **got)


def _print_timings(timings: dict[str, float], total_ms: float) -> None:
    from snarkd.prover.timing import ordered

    width = max(len(k) for k in [*timings, "total"])
    for name, ms in ordered({k: v for k, v in timings.items() if k != "total"}):
        print(f"{name:<{width}} {ms:10.1f} ms", file=sys.stderr)
    print(f"{'total':<{width}} {total_ms:10.1f} ms", file=sys.stderr)


def _bar_length(verify: bool) -> int:
    """The phases a proof's progress bar counts: the proof's (more extend it), the self-check, the write."""
    from snarkd.prover.timing import PROOF_STEPS

    return len(PROOF_STEPS) + verify + 1


class _Key:
    """The key of a one-shot proof: its path, and its KeyFile once something before the proof asked for its
    domain (the auto backend, the progress bar): then opened once, and the proof uses it (its header read
    once per `snarkd prove`)."""

    def __init__(self, path: str):
        self.path, self._file = path, None

    def file(self):
        if self._file is None:
            from snarkd.formats.zkey_layout import KeyFile

            self._file = KeyFile(self.path)
        return self._file

    def for_proof(self):
        """The KeyFile if one was opened, else the path (the proof opens it)."""
        return self.path if self._file is None else self._file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


ONE_SHOT_WHY = "one-shot path: the key mapped, each section checked as it is used"  # the backend line's why


def _plan(name: str | None, check_points: bool, key: _Key):
    """(backend name, why, the config or None) of a one-shot proof: --backend, else [prove] backend.
    "cpu" is the lean path (prover/oneshot.py: the prover's steps over the mapped key, no numpy, no config import). auto takes the GPU only where it wins for one proof ([prove]
    auto_cuda_min_domain), deciding on the key's header first: asking CUDA whether a GPU is there
    costs ~0.8 s of start-up. Without --backend, [prove] backend comes from the environment alone (a one-shot
    proof reads no config file), so the config layer (~50 ms of start-up) is loaded only for another backend."""
    if not name:
        from snarkd.config.prove import backend_from_env

        name = backend_from_env()  # None: $SNARKD_BACKEND is no backend, which Config.defaults() reports
    if name and name.lower() == "cpu" and not check_points:
        return "cpu", ONE_SHOT_WHY, None
    from snarkd.config import Config

    cfg = Config.defaults()
    name = (name or str(cfg.prove.backend)).lower()
    if name == "auto":
        from snarkd.prover.chooser import choose  # CuPy only if the domain is large enough for a GPU to win

        chosen, why = choose(name, size=1 << key.file().domain_power, floor=cfg.prove.auto_cuda_min_domain)
        return chosen, why, cfg
    why = name if name != "cpu" else ("the key read whole and checked (--check-points)" if check_points
                                      else ONE_SHOT_WHY)
    return name, why, cfg


def _backend(name: str, cfg):
    """The backend `name` of a one-shot proof with cfg's [gpus] settings. Without an explicit
    msm_tables (environment), no window tables: for one proof they cost more than they save. A cuda
    backend that cannot run here raises BackendUnavailable (exit 2)."""
    from snarkd.prover.backend import from_settings

    return from_settings(name, cfg=cfg, msm_tables=None if "gpus.msm_tables" in cfg.overrides else "off")


def _prove_lean(args, key: _Key, witness_path: str, proof_path: str, public_path: str) -> dict[str, float]:
    """The lean path: the prover's steps over the mapped key, no numpy (prover/oneshot.py); its timings."""
    from snarkd.prover.oneshot import prove_files

    bar = None
    # a progress bar as snarkd.prover.progress.wanted decides, tqdm imported only to show one
    if args.progress or (args.progress is None and not args.quiet and sys.stderr.isatty()):
        power = key.file().domain_power
        if args.progress or (1 << power) >= LARGE_DOMAIN:
            from snarkd.prover.progress import PhaseBar

            bar = PhaseBar(f"prove 2^{power}", _bar_length(args.verify), True)
    try:
        return prove_files(key.for_proof(), witness_path, threads=args.threads, timer=bar, witness_name=witness_path,
                           verify=args.verify, write=(proof_path, public_path)).timings
    finally:
        if bar is not None:
            bar.close()


def _prove_staged(args, backend_name: str, cfg, zkey_path: str, witness_path: str, proof_path: str,
                  public_path: str):
    """The staged path (prover.groth16: a GPU backend, or --check-points); (the backend's name, its timings)."""
    from snarkd.formats.wtns import read_wtns
    from snarkd.prover import ProvingKey, prove
    from snarkd.prover.output import write_proof
    from snarkd.prover.progress import PhaseBar, wanted
    from snarkd.prover.timing import PhaseTimer

    loading = PhaseTimer()
    with loading.phase("load"):
        key = ProvingKey.load(zkey_path, check_points=args.check_points)
        witness = read_wtns(witness_path)
    backend = _backend(backend_name, cfg)
    show = wanted(args.progress, args.quiet, key.domain_size >= LARGE_DOMAIN)
    with key, PhaseBar(f"prove 2^{key.zkey.domain_power}", _bar_length(args.verify), show) as timer:
        timer.ms.update(loading.ms)
        result = prove(key, witness, threads=args.threads, witness_name=witness_path, timer=timer, backend=backend)
        if args.verify:
            from snarkd.verifier.self_check import verify_against_key

            with timer.phase("verify"):
                verify_against_key(key.zkey, result.proof, result.public, witness_name=witness_path,
                                   threads=args.threads)
        with timer.phase("write"):
            write_proof(result, proof_path, public_path)
    return backend.name, timer.ms


def run(args) -> int:
    from snarkd.prover.output import write_proof

    start = time.perf_counter()
    if args.addr or args.key:
        if args.backend:
            raise InputError("--backend is for local proving; the daemon's backend comes from its [gpus] config")
        from snarkd.daemon.client import deadline_fields

        deadline_fields(args.deadline)  # checked before anything is sent
        if not (args.addr and args.key):
            raise InputError("--addr and --key go together: --addr HOST:PORT --key ID WITNESS.wtns PROOF.json PUBLIC.json")
        if len(args.args) != 3:
            raise InputError("with --addr: snarkd prove --addr HOST:PORT --key ID WITNESS.wtns PROOF.json PUBLIC.json")
        from snarkd.daemon.client import Client

        witness_path, proof_path, public_path = args.args
        if not os.path.isfile(witness_path):
            raise InputError(f"{witness_path}: no such witness file")
        from snarkd.cli.parsing import client_kwargs

        with Client(args.addr, **client_kwargs(args)) as client:  # the fastest way: by reference on the daemon's host
            result = client.prove(args.key, witness_paths=[witness_path], deadline=args.deadline, lane=args.lane or "")
        write_proof(result, proof_path, public_path)
        if args.timings:
            _print_timings(dict(result.timings), (time.perf_counter() - start) * 1e3)
            print(f"witness transport: {client.last_transport}", file=sys.stderr)
        return 0

    if args.deadline is not None or args.lane:
        raise InputError("--deadline and --lane are for proving through a daemon (--addr, --key)")
    if len(args.args) != 4:
        raise InputError("usage: snarkd prove KEY.zkey WITNESS.wtns PROOF.json PUBLIC.json")
    zkey_path, witness_path, proof_path, public_path = args.args
    zkey = _Key(zkey_path)
    try:
        backend_name, why, cfg = _plan(args.backend, args.check_points, zkey)
        lean = backend_name == "cpu" and not args.check_points
        if lean:
            timings = _prove_lean(args, zkey, witness_path, proof_path, public_path)
    finally:
        zkey.close()
    if not lean:
        backend_name, timings = _prove_staged(args, backend_name, cfg, zkey_path, witness_path, proof_path,
                                              public_path)
    if args.timings:
        _print_timings(timings, (time.perf_counter() - start) * 1e3)
        print(f"backend: {backend_name} ({why})", file=sys.stderr)
    return 0


run.exit_at_once = True  # snarkd.cli.main: no interpreter teardown after the proof is written (its files are durable)
