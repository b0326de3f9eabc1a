"""Progress bars: on a terminal only, for large inputs (or --progress), silenced by --quiet; the
outputs are the same with and without them."""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from clirun import env  # noqa: E402

from snarkd.prover.progress import wanted  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chain-bn128"


def on_terminal(*args) -> tuple[int, str]:
    """`snarkd ARGS` with stderr on a pseudo-terminal (isatty() is true there); returns (exit code, stderr)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal has a size
    proc = subprocess.Popen([sys.executable, "-m", "snarkd", *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, env=env())
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(60), out.decode("utf-8", "replace")


def test_wanted():
    assert wanted(True, quiet=True, large=False) and not wanted(False, quiet=False, large=True)
    assert not wanted(None, quiet=True, large=True) and not wanted(None, quiet=False, large=False)
    assert not wanted(None, quiet=False, large=True)  # pytest's stderr is not a terminal


@pytest.mark.slow
def test_prove_bar(tmp_path):
    args = ("prove", EXAMPLE / "chain.zkey", EXAMPLE / "chain.wtns", tmp_path / "p.json", tmp_path / "q.json")
    code, err = on_terminal(*args)  # a small key: no bar even on a terminal
    assert code == 0 and "prove 2^" not in err, err
    code, err = on_terminal(*args, "--progress")
    assert code == 0 and "prove 2^7 (msm_h)" in err and "prove 2^7 (verify)" in err and "11/11" in err, err
    code, err = on_terminal(*args, "--progress", "--no-verify")  # no self-check: one phase less
    assert code == 0 and "(verify)" not in err and "10/10" in err, err
    code, err = on_terminal(*args, "--progress", "--quiet")  # --progress wins over --quiet when both are given
    assert "prove 2^7" in err
    code, err = on_terminal(*args, "--quiet")
    assert code == 0 and err == "", err
    assert (tmp_path / "p.json").read_text()


@pytest.mark.slow
def test_setup_bar_and_quiet(tmp_path):
    code, err = on_terminal("setup", EXAMPLE / "chain.r1cs", tmp_path / "a.zkey", "--seed", "01")
    assert code == 0 and "setup B2: 100%|" in err, err
    code, err = on_terminal("setup", EXAMPLE / "chain.r1cs", tmp_path / "b.zkey", "--seed", "01", "--quiet")
    assert code == 0 and "%|" not in err and "NOT secure for production" in err, err
    assert (tmp_path / "a.zkey").read_bytes() == (tmp_path / "b.zkey").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("flags, shown", [((), False), (("--progress",), True), (("--progress", "--quiet"), True),
                                          (("--quiet",), False)])
def test_witness_bar(tmp_path, flags, shown):
    out, wasm = tmp_path / "w.wtns", tmp_path / "chain.wasm"
    shutil.copy(EXAMPLE / "chain.wasm", wasm)  # the witness program (.wprog) is written beside the wasm: not in examples/
    code, err = on_terminal("witness", wasm, EXAMPLE / "input.json", out, *flags)
    assert code == 0, err
    assert ("witness (calculate)" in err) == shown, err
    assert out.read_bytes() == (EXAMPLE / "chain.wtns").read_bytes()
