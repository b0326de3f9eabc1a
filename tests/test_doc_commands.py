"""Every shell command README.md and docs/*.md show, so none drifts from the code (tests/doc_commands.py finds them).

Each one is either run here, page by page in order, in a temporary directory holding a copy of examples/ (the
repository is never written), its exit code checked and, where the doc states what it prints or writes, that too;
or it is in SKIP with the reason it cannot run on a CI machine (2 cores, no GPU). A command whose program is not
`snarkd` runs only when named in RUN_AS_WRITTEN, so a new install step or tool in the docs fails here until it is
classified. Every `snarkd` command, skipped ones included, and every `snarkd ...` synopsis in ```text blocks and
code spans must name subcommands and long flags the real parser accepts (checked without running anything).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import clirun
import oracle
from doc_commands import (PAGES, REPO, DocCommand, cli_problem, commands_of_block, shell_commands, split_and,
                          synopses, synopsis_problem)

INSTALL = "installing snarkd: CI's own venv is made and installed by .ci/run (minutes of compiling), tests run in it"
CI_STEP = ".ci/run runs this very step before the suite; run from a test it would recurse or repeat minutes of work"

# (page, command): why it cannot run in CI. Every entry must still be a command of that page.
SKIP: dict[tuple[str, str], str] = {
    **{(page, cmd): INSTALL for page in ("README.md", "docs/install.md") for cmd in
       ("python3 -m venv .venv", ". .venv/bin/activate", "pip install .", "pip install -e '.[test,cluster]'")},
    ("README.md", "npm ci"): CI_STEP,
    ("README.md", "python -m pytest -n 2 -q"): CI_STEP + " (it is the suite this test is part of)",
    ("docs/install.md", "npm ci"): CI_STEP,
    ("docs/install.md", "python -m pytest -n 2 -q"): CI_STEP + " (it is the suite this test is part of)",
    ("docs/install.md", "pip install '.[docs]'"): INSTALL + " (the [test] extra brings mkdocs)",
    ("docs/install.md", "mkdocs build --strict"): "tests/test_docs.py::test_mkdocs_build_strict runs it (into a "
                                                  "temporary site/)",
    ("docs/install.md", "mkdocs serve"): "a preview server that runs until stopped",
    ("docs/js-client.md", "cd clients/js"): "the JavaScript client's build and tests: " + CI_STEP,
    ("docs/js-client.md", "npm ci"): "the JavaScript client's build and tests: " + CI_STEP,
    ("docs/js-client.md", "npm pack"): "writes the package into clients/js; its build (npm run build) is a CI step",
    ("docs/js-client.md", "cd /your/app"): "a user's own application",
    ("docs/js-client.md", "npm install /path/to/snarkd/clients/js/snarkd-client-0.1.0.tgz"): "a user's own application",
    ("docs/js-client.md", "npm run build"): "the JavaScript client's build and tests: " + CI_STEP,
    ("docs/js-client.md", "npm test"): "the JavaScript client's build and tests: " + CI_STEP,
    ("docs/cluster.md", "ray start --head --port 6379 --disable-usage-stats --include-dashboard=false"):
        "a multi-host Ray cluster (tests/cluster runs a front over a private Ray in a network namespace)",
    ("docs/cluster.md", "ray start --address HEAD:6379"): "a multi-host Ray cluster: another machine joins the head",
    ("docs/cluster.md", "snarkd start --config snarkd.toml"): "the cluster front: needs the Ray head started above",
    ("docs/security.md", "snarkd prove --addr prover.example:9820 --key chain --tls-ca ca.crt --token-file my.token "
                         "w.wtns proof.json public.json"):
        "a daemon on another host with TLS and tokens (tests/daemon/test_security.py covers them on loopback)",
    ("docs/security.md", "snarkd bench --addr prover.example:9820 --key chain --witness w.wtns -c 100 -j 16 --tls-ca "
                         "ca.crt --token-file my.token --tls-cert client.crt --tls-key client.key"):
        "a long benchmark (100 proofs) against a daemon on another host with mutual TLS",
}

# Programs besides snarkd that run as the doc writes them (harmless in a temporary directory).
RUN_AS_WRITTEN = {"printf", "npx"}


@dataclass(frozen=True)
class Expect:
    """What the doc says a command prints (each text in its stdout or stderr) or writes (files in its directory)."""
    out: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


# By command text (after localize): what the doc states about it, in its comment or the text around the block.
EXPECT: dict[str, Expect] = {
    "snarkd prove examples/chain-bn128/chain.zkey examples/chain-bn128/chain.wtns proof.json public.json --timings":
        Expect(out=("total",), files=("proof.json", "public.json")),  # "It writes proof.json and public.json"
    "snarkd verify examples/chain-bn128/vk.json public.json proof.json": Expect(out=("OK: proof is valid",)),
    "snarkd witness examples/chain-bn128/chain.wasm examples/chain-bn128/input.json w.wtns": Expect(files=("w.wtns",)),
    "npx snarkjs groth16 verify examples/chain-bn128/vk.json public.json proof.json": Expect(out=("OK!",)),
    "snarkd start --config snarkd.toml": Expect(out=("listening on 127.0.0.1:{port}",)),
    "snarkd status --config snarkd.toml": Expect(out=("pid", "up ", "keys:", "chain:", "jobs:", "memory:")),
    "snarkd stop --config snarkd.toml": Expect(out=("exited", "free")),
    "snarkd start --config examples/snarkd.toml": Expect(out=("listening on 127.0.0.1:{port}",)),
    "snarkd status --config examples/snarkd.toml": Expect(out=("pid", "up ", "fingerprint", "keys:", "jobs:", "RSS")),
    "snarkd stop --config examples/snarkd.toml": Expect(out=("exited", "free")),
    "snarkd aggregation-srs A.ptau B.ptau agg.srs": Expect(out=("wrote agg.srs: bn128, n up to 8,",)),
    "snarkd aggregation-srs --dev --curve bn128 --max 8192 agg.srs":
        Expect(out=("n up to 8192 (DEVELOPMENT SRS)", "NOT SECURE FOR PRODUCTION")),
    "snarkd aggregate vk.json agg.srs aggregate.json public0.json proof0.json public1.json proof1.json":
        Expect(out=("aggregated 2 proofs into aggregate.json",), files=("aggregate.json",)),
    "snarkd verify-aggregate vk.json agg.srs aggregate.json": Expect(out=("OK: aggregate is valid",)),
    "snarkd aggregate --addr 127.0.0.1:{port} --key chain --srs agg.srs agg.json --jobs {job1} {job2}":
        Expect(files=("agg.json",)),
    "snarkd aggregate --addr 127.0.0.1:{port} --key chain agg.json pub0.json p0.json pub1.json p1.json":
        Expect(files=("agg.json",)),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PageRun:
    """One page's commands' working directory: a copy of examples/ (examples/snarkd.toml's system paths moved in
    here), node_modules linked as after `npm ci` (for npx), `snarkd` on PATH running this tree, and a free port
    instead of 9820 so that a daemon already on this machine, or a parallel test's, is no obstacle."""

    def __init__(self, root: Path):
        self.root, self.port, self.jobs = root, _free_port(), ["JOB1", "JOB2"]
        shutil.copytree(REPO / "examples", root / "examples")
        oracle.npm_bin("snarkjs")  # fails naming `npm ci` when it was not run (npx would go to the network)
        (root / "node_modules").symlink_to(REPO / "node_modules")
        bin_dir = root / ".bin"
        bin_dir.mkdir()
        (bin_dir / "snarkd").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m snarkd "$@"\n')
        (bin_dir / "snarkd").chmod(0o755)
        for d in ("run", "cache", "system/run", "system/log", "system/lib"):
            (root / d).mkdir(mode=0o700, parents=True)
        # examples/snarkd.toml is a systemd install's config: its /run, /var/log and /var/lib paths come in here
        example = root / "examples" / "snarkd.toml"
        text = example.read_text().replace("127.0.0.1:9820", f"127.0.0.1:{self.port}")
        for system, here in (("/run/snarkd", "run"), ("/var/log/snarkd", "log"), ("/var/lib/snarkd", "lib")):
            text = text.replace(f'"{system}', f'"{root}/system/{here}')
        example.write_text(text)
        self.env = clirun.env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", XDG_RUNTIME_DIR=root / "run",
                              XDG_CACHE_HOME=root / "cache")

    def localize(self, text: str) -> str:
        """The command as run here: the free port for 9820; the README's first config given that port as its
        listen address (it leaves listen at its default, 127.0.0.1:9820); job ids for the doc's JOB1 JOB2."""
        text = text.replace("127.0.0.1:9820", f"127.0.0.1:{self.port}").replace("JOB1 JOB2", " ".join(self.jobs))
        return text.replace("printf '[keys.preload]\\n", f"printf '[daemon]\\nlisten = \"127.0.0.1:{self.port}\"\\n"
                                                         "[keys.preload]\\n")

    def sh(self, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=self.root, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def must(self, command: str) -> str:
        res = self.sh(command)
        assert res.returncode == 0, f"setup `{command}` failed ({res.returncode}):\n{res.stdout}{res.stderr}"
        return res.stdout

    def stop_daemons(self) -> None:
        """SIGTERM to every daemon whose pid file is under this directory (a failed run must not leave one)."""
        for pid_file in self.root.rglob("*.pid"):
            try:
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGTERM)
            except (ValueError, IndexError, ProcessLookupError, PermissionError, OSError):
                continue
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)


# -- what a page's commands assume exists beforehand (the doc's "given ..."), keyed like SKIP ----------------------

def _two_proofs(run: PageRun) -> None:
    """aggregation.md's files: the example's vk, two proofs of it (public0/proof0, public1/proof1, and the daemon
    block's pub0/p0, pub1/p1), and two snarkjs .ptau files of independent ceremonies as A.ptau and B.ptau."""
    run.must("cp examples/chain-bn128/vk.json vk.json")
    for i in (0, 1):
        run.must(f"snarkd prove examples/chain-bn128/chain.zkey examples/chain-bn128/chain.wtns proof{i}.json "
                 f"public{i}.json && cp proof{i}.json p{i}.json && cp public{i}.json pub{i}.json")
    for name, entropy in (("A", "ceremony A"), ("B", "ceremony B")):
        shutil.copy(oracle.contributed_ptau("bn128", entropy, 4), run.root / f"{name}.ptau")


def _aggregating_daemon(run: PageRun) -> None:
    """A daemon with the example key preloaded, `[aggregate] srs` set (agg.srs, made above) and two finished jobs."""
    (run.root / "agg.toml").write_text(f'[daemon]\nlisten = "127.0.0.1:{run.port}"\n[keys.preload]\nchain = '
                                       f'"{run.root}/examples/chain-bn128/chain.zkey"\n[aggregate]\nsrs = "agg.srs"\n')
    run.must("snarkd start --config agg.toml")
    for i in (0, 1):
        run.must(f"snarkd prove --addr 127.0.0.1:{run.port} --key chain examples/chain-bn128/chain.wtns "
                 f"job{i}.proof.json job{i}.public.json")
    listing = run.must(f"snarkd jobs list --addr 127.0.0.1:{run.port} --key chain --state COMPLETED")
    run.jobs = [line.split()[0] for line in listing.splitlines()[1:] if line.strip()]
    assert len(run.jobs) == 2, listing


FIRST_AGG_ADDR = "snarkd aggregate --addr 127.0.0.1:9820 --key chain --srs agg.srs agg.json --jobs JOB1 JOB2"
BEFORE = {
    ("docs/aggregation.md", "snarkd aggregation-srs A.ptau B.ptau agg.srs"): _two_proofs,
    ("docs/aggregation.md", FIRST_AGG_ADDR): _aggregating_daemon,
}


def _all_commands() -> list[DocCommand]:
    return [c for page in PAGES for c in shell_commands(page)]


def _runnable(c: DocCommand) -> bool:
    return (c.page, c.text) not in SKIP and (c.program == "snarkd" or c.program in RUN_AS_WRITTEN)


def test_the_extraction():
    """Comments, `&&`, continuation lines and console prompts come apart as a reader means them."""
    body = ("printf 'a && b # c\\n' > f   # writes f\n"
            "x --a 1 \\\n   --b 2 && y\n")
    cmds = commands_of_block("p.md", "bash", 5, body)
    assert [(c.line, c.text, c.comment) for c in cmds] == [
        (5, "printf 'a && b # c\\n' > f", "writes f"), (6, "x --a 1 --b 2", ""), (6, "y", "")]
    assert [c.text for c in commands_of_block("p.md", "console", 1, "$ snarkd verify a b c\nOK: proof is valid\n")] \
        == ["snarkd verify a b c"]
    assert split_and("a && 'b && c' && d") == ["a", "'b && c'", "d"]


def test_the_cli_checks_catch_drift():
    assert cli_problem(["prove", "k.zkey", "w.wtns", "p.json", "pub.json", "--timings"]) is None
    assert "--bogus" in cli_problem(["prove", "k.zkey", "w.wtns", "p.json", "pub.json", "--bogus"])
    assert cli_problem(["prove", "k.zkey", "w.wtns", "p.json", "pub.json", "--timing"]) == "unknown option(s) --timing"
    assert "invalid choice" in cli_problem(["provee", "k.zkey"])
    assert synopsis_problem("snarkd keys list|load ID PATH.zkey [--addr HOST:PORT] [--json]") is None
    assert synopsis_problem("snarkd serve|start|stop --config F") is None
    assert synopsis_problem("snarkd keys list|drop ID") == "'list|drop': no such snarkd command"
    assert synopsis_problem("snarkd prove KEY.zkey [--no-verifyy]") == "unknown option(s) --no-verifyy"


def test_every_snarkd_command_parses():
    """Run or skipped, every shell command `snarkd ...` is accepted by the CLI's parser as written; every synopsis
    (```text blocks, code spans) names real subcommands and long flags."""
    problems = [f"{c.where}: `{c.text}`: {p}" for c in _all_commands() if c.program == "snarkd"
                if (p := cli_problem(shlex.split(c.text)[1:]))]
    found = [c for page in [*PAGES, "ARCHITECTURE.md"] for c in synopses(page)]
    problems += [f"{c.where}: `{c.text}`: {p}" for c in found if (p := synopsis_problem(c.text))]
    assert len(found) > 50  # the extraction still finds cli.md's table and the code spans
    assert not problems, "doc commands the CLI does not accept:\n" + "\n".join(problems)


def test_every_command_is_run_or_skipped_with_a_reason():
    commands = _all_commands()
    unclassified = [f"{c.where}: `{c.text}`" for c in commands if not _runnable(c) and (c.page, c.text) not in SKIP]
    assert not unclassified, ("doc commands neither run nor skipped: run them (RUN_AS_WRITTEN) or add each to SKIP "
                              "with why it cannot run in CI:\n" + "\n".join(unclassified))
    present = {(c.page, c.text) for c in commands}
    stale = [k for k in [*SKIP, *BEFORE] if k not in present]
    run_texts = {c.text for c in commands if _runnable(c)}
    stale += [t for t in EXPECT if t.replace("{port}", "9820").replace("{job1} {job2}", "JOB1 JOB2") not in run_texts]
    assert not stale, "entries for commands the docs no longer show:\n" + "\n".join(map(str, stale))
    assert sum(map(_runnable, commands)) >= 20


RUN_PAGES = [page for page in PAGES if any(map(_runnable, shell_commands(page)))]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_commands_run(page, tmp_path):
    """The page's commands, in order, in one directory; each exits 0 and prints and writes what the doc says."""
    run = PageRun(tmp_path)
    ran = 0
    try:
        for c in shell_commands(page):
            if not _runnable(c):
                continue
            if (hook := BEFORE.get((c.page, c.text))) is not None:
                hook(run)
            command = run.localize(c.text)
            res = run.sh(command)
            said = f"{c.where}: `{command}` exited {res.returncode}:\n{res.stdout}{res.stderr}"
            assert res.returncode == 0, said
            key = command.replace(str(run.port), "{port}")
            if run.jobs != ["JOB1", "JOB2"]:
                key = key.replace(" ".join(run.jobs), "{job1} {job2}")
            expect = EXPECT.get(key, Expect())
            for text in expect.out:
                assert text.format(port=run.port) in res.stdout + res.stderr, f"no {text!r} in the output of " + said
            for name in expect.files:
                assert (run.root / name).is_file(), f"{c.where}: `{command}` did not write {name}"
            ran += 1
    finally:
        run.stop_daemons()
    assert ran >= 3
