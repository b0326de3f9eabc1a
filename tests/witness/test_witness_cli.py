"""`snarkd witness` and `snarkd fullprove` as users run them: files, exit codes, messages."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

import oracle
from wfixtures import ARRAYS_INPUT, arrays, wasm_cache  # noqa: F401


def snarkd(*args):
    return subprocess.run([sys.executable, "-m", "snarkd", *map(str, args)], capture_output=True, text=True)


def write_json(path, obj):
    path.write_text(json.dumps(obj))
    return path


@pytest.mark.slow
def test_witness_cli_matches_snarkjs(arrays, tmp_path):
    inp = write_json(tmp_path / "input.json", ARRAYS_INPUT)
    out = tmp_path / "out.wtns"
    res = snarkd("witness", arrays.wasm, inp, out, "--timings")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "c is 53\n"  # the circuit's log(), as snarkjs prints it
    assert "witness" in res.stderr and "total" in res.stderr
    assert out.read_bytes() == arrays.snarkjs_witness(ARRAYS_INPUT).read_bytes()
    res = snarkd("witness", arrays.wasm, inp, out, "--quiet")
    assert res.returncode == 0 and res.stdout == ""


@pytest.mark.parametrize(
    "inputs, needle",
    [
        (dict(ARRAYS_INPUT, a=7), "Error in template Arrays_0 line: 16"),
        ({"a": 3}, "missing input signal 'b'"),
        (dict(ARRAYS_INPUT, nope=1), "input 'nope' is not an input signal"),
        ({"a": 3, "b": [1, 2, 3]}, "input 'b': not enough values: 3 given, the signal has 6"),
        ({"a": "0x" + "f" * 64, "b": ARRAYS_INPUT["b"]}, "input 'a': not less than the field prime"),
        ({"a": "three", "b": ARRAYS_INPUT["b"]}, "input 'a': not an integer: a string that is not decimal"),
    ],
)
@pytest.mark.slow
def test_witness_cli_input_errors_exit_3(arrays, tmp_path, inputs, needle):
    inp = write_json(tmp_path / "input.json", inputs)
    out = tmp_path / "out.wtns"
    res = snarkd("witness", arrays.wasm, inp, out)
    assert res.returncode == 3, res.stderr
    assert needle in res.stderr
    assert res.stderr.startswith("snarkd: error: ") and "Traceback" not in res.stderr
    assert not out.exists()


@pytest.mark.slow
def test_witness_cli_file_errors(arrays, tmp_path):
    out = tmp_path / "out.wtns"
    res = snarkd("witness", arrays.wasm, tmp_path / "none.json", out)
    assert res.returncode == 3 and "none.json" in res.stderr
    (tmp_path / "bad.json").write_text("{nope")
    res = snarkd("witness", arrays.wasm, tmp_path / "bad.json", out)
    assert res.returncode == 3 and "bad.json" in res.stderr and "JSON" in res.stderr
    write_json(tmp_path / "list.json", [1, 2])
    res = snarkd("witness", arrays.wasm, tmp_path / "list.json", out)
    assert res.returncode == 3 and "list.json" in res.stderr
    inp = write_json(tmp_path / "input.json", ARRAYS_INPUT)
    res = snarkd("witness", tmp_path / "none.wasm", inp, out)
    assert res.returncode == 3 and "none.wasm" in res.stderr
    (tmp_path / "junk.wasm").write_bytes(b"junk")
    res = snarkd("witness", tmp_path / "junk.wasm", inp, out)
    assert res.returncode == 3 and "junk.wasm" in res.stderr
    assert not out.exists()


# What `snarkd witness --engine native` on a cached program never imports: each cost its whole process time
# (bench/witness_vs_circom_cpp.py; a process of ~70 ms of which ~30 ms were these, measured with -X importtime).
NOT_ON_THE_CACHED_PATH = ("numpy", "wasmtime", "logging", "dataclasses", "typing", "pathlib", "tempfile", "threading",
                          "pkgutil", "snarkd.config.loader", "snarkd.formats.binfile",
                          "argparse", "snarkd.native._core",  # snarkd.cli.main: quick_args; CRC-32C from _scan
                          "shutil",  # shutil: argparse's help width, found only when help is written (cli.HelpFormatter)
                          # ~3 ms (issue 37, round 17): json text read by _json's scanner (formats.json_text.parse),
                          # input strings told without regular expressions
                          "re", "enum", "json")


def lean_cli_witness(wasm, inp, out) -> None:
    """`snarkd witness --engine native` in a fresh process: it succeeds and imports none of NOT_ON_THE_CACHED_PATH."""
    code = ("import sys; from snarkd.cli import main; "
            f"rc = main(['witness', '--engine', 'native', '--quiet', {str(wasm)!r}, {str(inp)!r}, {str(out)!r}]); "
            f"print(rc, [m for m in {NOT_ON_THE_CACHED_PATH!r} if m in sys.modules])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[-2] == "0 []", res.stdout


def test_witness_cli_on_a_cached_program_stays_lean(arrays, tmp_path):
    wasm = tmp_path / "circuit.wasm"
    wasm.write_bytes(arrays.wasm.read_bytes())
    inp = write_json(tmp_path / "input.json", ARRAYS_INPUT)
    out = tmp_path / "out.wtns"
    assert snarkd("witness", "--engine", "native", "--quiet", wasm, inp, out).returncode == 0  # builds the program
    assert (tmp_path / "circuit.wasm.wprog").exists()
    out.unlink()
    lean_cli_witness(wasm, inp, out)
    assert out.read_bytes() == arrays.snarkjs_witness(ARRAYS_INPUT).read_bytes()


def test_cli_usage_errors():
    assert snarkd("witness", "only-one-arg").returncode == 2
    assert snarkd("fullprove", "a", "b", "c").returncode == 2


def _have_native() -> bool:
    try:
        return importlib.util.find_spec("snarkd.native._core") is not None
    except ModuleNotFoundError:
        return False


needs_native = pytest.mark.skipif(not _have_native(), reason="snarkd.native._core is not built")


@pytest.mark.slow
@needs_native
def test_fullprove_verifies_with_snarkjs(chain_circuit, tmp_path):
    inp = write_json(tmp_path / "input.json", chain_circuit.inputs)
    proof, public, wtns = tmp_path / "proof.json", tmp_path / "public.json", tmp_path / "w.wtns"
    res = snarkd("fullprove", inp, chain_circuit.circuit.wasm, chain_circuit.zkey, proof, public, "--wtns", wtns, "--timings")
    assert res.returncode == 0, res.stderr
    assert "witness" in res.stderr and "msm_a" in res.stderr
    assert wtns.read_bytes() == chain_circuit.wtns.read_bytes()
    assert oracle.snarkjs_verify(chain_circuit.vk, public, proof)
    ref_proof, ref_public = chain_circuit.circuit.snarkjs_prove(chain_circuit.wtns, tmp_path)
    assert json.loads(public.read_text()) == json.loads(ref_public.read_text())


@pytest.mark.slow
@needs_native
def test_fullprove_circomlib(circomlib_circuit, tmp_path):
    inp = write_json(tmp_path / "input.json", circomlib_circuit.inputs)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = snarkd("fullprove", inp, circomlib_circuit.circuit.wasm, circomlib_circuit.zkey, proof, public)
    assert res.returncode == 0, res.stderr
    assert oracle.snarkjs_verify(circomlib_circuit.vk, public, proof)


@pytest.mark.slow
@needs_native
def test_fullprove_errors_exit_3(chain_circuit, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    inp = write_json(tmp_path / "input.json", {"k": 3})
    res = snarkd("fullprove", inp, chain_circuit.circuit.wasm, chain_circuit.zkey, proof, public)
    assert res.returncode == 3 and "'x'" in res.stderr
    assert not proof.exists() and not public.exists()
    # a wasm of another circuit: its witness does not fit the key
    from cases import build_case

    other = build_case("many_public", chain_circuit.curve)
    inp = write_json(tmp_path / "input2.json", other.inputs)
    res = snarkd("fullprove", inp, other.circuit.wasm, chain_circuit.zkey, proof, public)
    assert res.returncode == 3, res.stderr
    assert not proof.exists() and not public.exists()


def test_integers_above_2_53_exact_and_said_on_stderr(arrays, tmp_path):
    """An integer JSON number above 2^53 is read exactly (as its string form, which snarkjs reads exactly too),
    and stderr says where snarkjs (JSON.parse) would round it; integers that are doubles say nothing."""
    big = 2**53 + 1  # not a double: JSON.parse reads 2^53
    text = '{"a": "3", "b": [[1, %d], [3, 4], [5, -%d]]}' % (big, big)
    inp = tmp_path / "input.json"
    inp.write_text(text)
    out = tmp_path / "out.wtns"
    res = snarkd("witness", arrays.wasm, inp, out)
    assert res.returncode == 0, res.stderr
    assert f"{inp}: b[0][1], b[2][1]: an integer above 2^53 written as a JSON number" in res.stderr
    assert str(big) not in res.stderr  # inputs may be secret: the message names, never quotes
    exact = {"a": "3", "b": [[1, str(big)], [3, 4], [5, str(-big)]]}
    assert out.read_bytes() == arrays.snarkjs_witness(exact).read_bytes()
    # snarkjs on the same text computes another witness: the one of the rounded numbers
    theirs = tmp_path / "snarkjs.wtns"
    oracle.snarkjs("wtns", "calculate", arrays.wasm, inp, theirs)
    rounded = {"a": "3", "b": [[1, str(2**53)], [3, 4], [5, str(-(2**53))]]}
    assert theirs.read_bytes() == arrays.snarkjs_witness(rounded).read_bytes() != out.read_bytes()
    inp.write_text('{"a": 3, "b": [[1, %d], [3, 4], [5, 6]]}' % 2**60)  # a double: read alike
    res = snarkd("witness", arrays.wasm, inp, out)
    assert res.returncode == 0 and "2^53" not in res.stderr


def test_rounded_by_json_parse_paths():
    from snarkd.witness.inputs import rounded_by_json_parse

    assert rounded_by_json_parse({"a": 2**53, "b": 2**53 + 1, "c": [True, -(2**64 + 1), "9007199254740993"],
                                  "d": {"e": [[10**400]]}, "f": 2.0**70}) == ["b", "c[1]", "d.e[0][0]"]


def test_witness_cli_resolves_the_wasm_cache_from_its_environment(arrays, tmp_path, monkeypatch):
    """The library's cache=True is the declared default; the entry point passes [keys] wasm_cache as configured
    ($SNARKD_WASM_CACHE here), so the compiled module is kept there."""
    monkeypatch.setenv("SNARKD_WASM_CACHE", str(tmp_path / "configured"))
    inp = write_json(tmp_path / "input.json", ARRAYS_INPUT)
    out = tmp_path / "out.wtns"
    res = snarkd("witness", "--engine", "wasm", "--quiet", arrays.wasm, inp, out)
    assert res.returncode == 0, res.stderr
    assert list((tmp_path / "configured").glob("*.cwasm"))
    assert out.read_bytes() == arrays.snarkjs_witness(ARRAYS_INPUT).read_bytes()
