"""The native witness program on disk (CIRCUIT.wasm.wprog): built once, loaded after; a damaged,
truncated, stale or foreign file is ignored with a warning and rebuilt; learnt paths persist; and
`snarkd witness --engine` as users run it (exit 3 where no native program can be built, the fallback
said on stderr)."""

from __future__ import annotations

import json
import logging
import shutil

import pytest

import clirun
import snarkd.witness.native as native_module
import oracle
from snarkd.witness import NativeCalculator, NativeUnavailable, make_calculator, program_file
from wfixtures import compiled, wasm_cache  # noqa: F401

INPUTS = {"a": 27, "b": 4}


@pytest.fixture
def control(tmp_path):
    """The control circuit's .wasm copied where its program can be written and damaged."""
    c = compiled("control.circom", "bn128", include_circomlib=True)
    wasm = tmp_path / "control.wasm"
    shutil.copy(c.wasm, wasm)
    return c, wasm


def test_built_once_then_loaded(control):
    c, wasm = control
    first = NativeCalculator(wasm, cache=False)
    path = wasm.with_name(wasm.name + ".wprog")
    assert first.loaded_from == path and path.exists() and first.build_ms > 0
    again = NativeCalculator(wasm, cache=False)
    assert again.loaded_from == path and again.build_ms == 0
    assert (again.calculate(INPUTS).values == first.calculate(INPUTS).values).all()


@pytest.mark.parametrize("damage, reason", [  # every change is caught by the file's HMAC tag first
    (lambda b: b[:-7], "tag does not match"),                                  # truncated
    (lambda b: b[:200] + bytes([b[200] ^ 1]) + b[201:], "tag does not match"),  # one bit of the header
    (lambda b: b[:-40] + bytes([b[-40] ^ 0x10]) + b[-39:], "tag does not match"),  # one bit of the program
    (lambda b: b"snarkdPK" + b[8:], "tag does not match"),
    (lambda b: b[:8] + (99).to_bytes(4, "little") + b[12:], "tag does not match"),
    # an earlier snarkd's file (version 2: no header tag): its whole-file tag is over another layout; said so
    (lambda b: b[:8] + (2).to_bytes(4, "little") + b[12:], "in an old format (version 2, this snarkd writes version 3)"),
    (lambda b: b"", "0 bytes"),
])
def test_a_damaged_program_is_ignored_with_a_warning_and_rebuilt(control, caplog, damage, reason):
    c, wasm = control
    NativeCalculator(wasm, cache=False)
    path = wasm.with_name(wasm.name + ".wprog")
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        calc = NativeCalculator(wasm, cache=False)
    assert any("ignoring native witness program" in r.message and reason in r.message for r in caplog.records)
    assert calc.build_ms > 0 and calc.calculate(INPUTS).values.shape[0] == calc.witness_size
    program_file.read(path, calc._ident)  # rewritten whole


def _one_instruction_program(witness_size: int, n_inputs: int, operand: int) -> bytes:
    """A program body of one path of one instruction, R_ADD d=0 a=operand b=0, coded as program.hpp writes it
    (PROGRAM_FORMAT 3: op | k << 6, then zigzag varints of each field's change)."""

    def varint(v: int) -> bytes:
        out = b""
        while v >= 0x80:
            out += bytes([v & 0x7F | 0x80])
            v >>= 7
        return out + bytes([v])

    def zigzag(delta: int) -> int:  # of a 32-bit difference
        d = delta & 0xFFFFFFFF
        return ((d << 1) & 0xFFFFFFFF) ^ (0xFFFFFFFF if d >> 31 else 0)

    def u32(v: int) -> bytes:
        return v.to_bytes(4, "little")

    def u64(v: int) -> bytes:
        return v.to_bytes(8, "little")

    code = bytes([0]) + varint(zigzag(0)) + varint(zigzag(operand)) + varint(zigzag(0))
    path = u32(0) + u32(1) + u32(0) + u32(0) + u32(0) + u64(0) + u64(len(code)) + code + u32(0) + u64(0)
    return u32(witness_size) + u32(n_inputs) + u32(1) + path


def test_programs_round_trip_through_their_coding(control):
    _, wasm = control
    calc = NativeCalculator(wasm, cache=False)
    body = calc.program.serialize()
    again = type(calc.program).load(calc.program.curve, body)
    assert again.serialize() == body and again.path_stats() == calc.program.path_stats()
    path = wasm.with_name(wasm.name + ".wprog")
    assert bytes(program_file.read(path, calc._ident)[1]) == body  # what write_to put in the file
    # the one-instruction body decodes (an operand inside the frame) before its twin below is refused
    type(calc.program).load(calc.program.curve, _one_instruction_program(calc.witness_size, calc.input_size, 1))


def test_a_well_formed_but_wrong_program_body_is_refused_by_the_native_checks(control, caplog):
    _, wasm = control
    calc = NativeCalculator(wasm, cache=False)
    path = wasm.with_name(wasm.name + ".wprog")
    meta, _ = program_file.read(path, calc._ident)
    # an instruction whose operand points past the frame, with every checksum right
    bad = _one_instruction_program(calc.witness_size, calc.input_size, 2**31)
    program_file.write(path, calc._ident, meta, bad)
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        again = NativeCalculator(wasm, cache=False)
    assert any("ignoring native witness program" in r.message for r in caplog.records)
    assert again.build_ms > 0


def test_a_wrong_body_under_an_unserved_verdict_is_refused_when_first_loaded(control, caplog):
    """A value-dependent file whose paths never served is loaded lazily (native.py `program`): its body's native
    checks run when the paths are first asked for, and a body they refuse leaves no path (and no verdict) instead
    of a crash; the control-flow run before that needs no path."""
    c, wasm = control
    calc = NativeCalculator(wasm, cache=False)
    path = wasm.with_name(wasm.name + ".wprog")
    meta, _ = program_file.read(path, calc._ident)
    bad = _one_instruction_program(calc.witness_size, calc.input_size, 2**31)
    program_file.write(path, calc._ident, dict(meta, value_dependent=True, hits=0), bad)
    again = NativeCalculator(wasm, cache=False)
    assert again.value_dependent and again._program is None
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        assert again.program.n_paths == 0
    assert any("ignoring the paths of native witness program" in r.message for r in caplog.records)
    assert not again.value_dependent and "hits" not in again.meta


def test_an_unserved_verdict_reads_its_header_alone_and_checks_the_whole_tag_when_loaded(control, caplog):
    """Under an unserved verdict only the opening is read (its header tag checked): the body is read, and the whole
    file's tag checked, when the paths are first asked for; a body altered in place after the header was read
    (header and header tag intact) is refused then, by the whole file's tag, leaving no path."""
    c, wasm = control
    calc = NativeCalculator(wasm, cache=False)
    path = wasm.with_name(wasm.name + ".wprog")
    meta, body = program_file.read(path, calc._ident)
    program_file.write(path, calc._ident, dict(meta, value_dependent=True, hits=0), bytes(body))
    again = NativeCalculator(wasm, cache=False)
    assert isinstance(again._body, program_file.DeferredBody)
    # the full read of the same file gives the same body the deferred one does
    assert bytes(program_file.read(path, calc._ident)[1]) == bytes(body)
    data = bytearray(path.read_bytes())
    data[len(data) - 80] ^= 1  # inside the program, before its CRC and the two tags
    with open(path, "r+b") as fh:  # in place: the descriptor the calculator holds sees it
        fh.write(data)
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        assert again.program.n_paths == 0
    assert any("tag does not match" in r.message for r in caplog.records)
    # the whole file's tag is checked on a full read too
    with pytest.raises(program_file.ProgramFileError, match="tag does not match"):
        program_file.read(path, calc._ident)
    # the control-flow run needs no path, and gives snarkjs's witness
    fresh = NativeCalculator(wasm, cache=False)
    assert (fresh.calculate(INPUTS).values == _snarkjs_values(c)).all()


def test_a_program_of_another_wasm_or_setting_is_stale(control, caplog, tmp_path):
    c, wasm = control
    other = compiled("ops.circom", "bn128")
    shutil.copy(other.wasm, tmp_path / "ops.wasm")
    NativeCalculator(tmp_path / "ops.wasm", cache=False)
    shutil.copy(tmp_path / "ops.wasm.wprog", wasm.with_name(wasm.name + ".wprog"))
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        calc = NativeCalculator(wasm, cache=False)
    assert any("stale" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        sane = NativeCalculator(wasm, cache=False, sanity_check=True)  # init(1) runs other code
    assert sane.build_ms > 0 and any("stale" in r.message for r in caplog.records)
    assert calc.witness_size == sane.witness_size


def test_learnt_paths_persist(control, monkeypatch):
    monkeypatch.setattr(native_module, "CONTROL_FLOW_AFTER", native_module.MAX_PATHS + 1)  # recording misses, never the control-flow run
    c, wasm = control
    calc = NativeCalculator(wasm, cache=False)
    for a in (27, 6, 7):
        calc.calculate({"a": a, "b": 1})
    assert calc.stats.recorded >= 2
    again = NativeCalculator(wasm, cache=False)
    assert again.program.n_paths == calc.program.n_paths
    for a in (27, 6, 7):
        again.calculate({"a": a, "b": 1})
    assert again.stats.native == 3 and again.stats.recorded == 0


def test_without_a_writable_place_beside_the_wasm_the_cache_dir_keeps_it(control, tmp_path):
    c, wasm = control
    cache = tmp_path / "cache"
    calc = NativeCalculator(wasm.read_bytes(), cache=cache)  # bytes: nothing beside them
    assert calc.loaded_from is not None and calc.loaded_from.parent == cache
    assert NativeCalculator(wasm.read_bytes(), cache=cache).build_ms == 0


@pytest.fixture(scope="module")
def goldilocks(tmp_path_factory):
    """A circuit over a field the native engine does not do (circom -p goldilocks)."""
    d = tmp_path_factory.mktemp("goldilocks")
    (d / "g.circom").write_text("pragma circom 2.0.0;\ntemplate G() { signal input a; signal output b; "
                                "b <== a * a + 1; }\ncomponent main = G();\n")
    oracle.run(["node", oracle.compiler_cli(), "g.circom", "--wasm", "-p", "goldilocks", "-o", "."], cwd=d)
    return d / "g_js" / "g.wasm"


def test_another_field_is_native_unavailable_and_auto_uses_the_wasm(goldilocks):
    with pytest.raises(NativeUnavailable, match="no native witness program for this field"):
        make_calculator(goldilocks, "native", cache=False)
    calc = make_calculator(goldilocks, "auto", cache=False)
    assert not hasattr(calc, "program") and calc.calculate({"a": 3}).value(1) == 10


def test_cli_engine_native_exit_3_where_none_can_be_built(goldilocks, tmp_path):
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps({"a": 3}))
    res = clirun.snarkd("witness", goldilocks, inp, tmp_path / "w.wtns", "--engine", "native")
    assert res.returncode == 3 and "no native witness program for this field" in res.stderr
    res = clirun.snarkd("witness", goldilocks, inp, tmp_path / "w.wtns", "--engine", "auto")
    assert res.returncode == 0, res.stderr


def test_cli_native_witness_is_snarkjs_byte_for_byte_and_cached(control, tmp_path):
    c, wasm = control
    inp = tmp_path / "in.json"
    for a in (27, 5):
        inp.write_text(json.dumps({"a": a, "b": 4}))
        out = tmp_path / f"{a}.wtns"
        res = clirun.snarkd("witness", wasm, inp, out, "--engine", "native", "--timings")
        assert res.returncode == 0, res.stderr
        assert res.stdout == f"a {a} b 4 steps {111 if a == 27 else 5}\n"
        assert out.read_bytes() == c.snarkjs_witness({"a": a, "b": 4}).read_bytes()
        assert "load" in res.stderr and "wasm engine" not in res.stderr


def test_cli_says_on_stderr_when_the_wasm_engine_answered(control, tmp_path):
    c, wasm = control
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps({"a": 5, "b": -1}))  # a % (b + 1): by zero
    res = clirun.snarkd("witness", wasm, inp, tmp_path / "w.wtns", "--engine", "native")
    assert res.returncode == 3
    assert "ran on the wasm engine" in res.stderr and "witness calculation failed" in res.stderr


# -- issue 33, findings 2 and 3: a program file is data to check, not trust ---------------------------------

def _snarkjs_values(c):
    from snarkd.formats.wtns import read_wtns

    return read_wtns(c.snarkjs_witness(INPUTS)).values


def test_a_wprog_linked_to_dev_zero_or_a_fifo_is_refused_at_once(control, caplog):
    """Planted beside the wasm: a link to /dev/zero drove LoadKey to 3 GiB, a FIFO hung it; now both are
    refused without reading (O_NOFOLLOW, regular files only) and the program is rebuilt elsewhere."""
    import os
    import resource
    import time

    c, wasm = control
    path = wasm.with_name(wasm.name + ".wprog")
    for plant in (lambda: path.symlink_to("/dev/zero"), lambda: os.mkfifo(path)):
        path.unlink(missing_ok=True)
        plant()
        rss, t = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic()
        with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
            calc = NativeCalculator(wasm, cache=False)
        assert time.monotonic() - t < 10
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 200 << 10  # KiB: nothing read
        assert any(str(path) in r.message and "ignoring" in r.message for r in caplog.records)
        assert (calc.calculate(INPUTS).values == _snarkjs_values(c)).all()
        # the rebuilt program replaced the planted entry (a rename: the link's target was never written)
        assert not path.is_symlink() and path.is_file() and program_file.read(path, calc._ident)
        caplog.clear()


def test_another_circuits_program_rebound_to_this_wasm_is_refused(control, caplog, tmp_path):
    """The attack of finding 3: ops's program with its header's identity rewritten to this wasm's and the
    header CRC recomputed. Every CRC is right; the HMAC tag (bound to the identity) is not."""
    from snarkd.formats.checked_header import PREFIX, pack

    c, wasm = control
    mine = NativeCalculator(wasm, cache=False)
    other = compiled("ops.circom", "bn128")
    shutil.copy(other.wasm, tmp_path / "ops.wasm")
    NativeCalculator(tmp_path / "ops.wasm", cache=False)
    data = (tmp_path / "ops.wasm.wprog").read_bytes()
    hlen = int.from_bytes(data[12:16], "little")
    header = json.loads(data[PREFIX.size : PREFIX.size + hlen])
    header["identity"] = mine._ident
    rebound = pack(program_file.MAGIC, program_file.VERSION, json.dumps(header, sort_keys=True).encode()) \
        + data[PREFIX.size + hlen + 4 :]
    path = wasm.with_name(wasm.name + ".wprog")
    path.write_bytes(rebound)
    with pytest.raises(program_file.ProgramFileError, match="tag does not match"):
        program_file.read(path, mine._ident)
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        calc = NativeCalculator(wasm, cache=False)
    assert calc.build_ms > 0 and any("tag does not match" in r.message for r in caplog.records)
    assert (calc.calculate(INPUTS).values == _snarkjs_values(c)).all()


def test_a_program_in_a_directory_others_can_write_is_not_used_nor_written_there(control, caplog, tmp_path):
    """A 1777 directory (the cross-user case: uid 20002 planted a program root then used): its programs are
    not trusted, even this user's own, and none is written there."""
    c, wasm = control
    NativeCalculator(wasm, cache=False)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    shutil.copy(wasm, shared / "control.wasm")
    shutil.copy(wasm.with_name(wasm.name + ".wprog"), shared / "control.wasm.wprog")
    before = (shared / "control.wasm.wprog").read_bytes()
    with caplog.at_level(logging.WARNING, logger="snarkd.witness"):
        calc = NativeCalculator(shared / "control.wasm", cache=tmp_path / "own-cache")
    assert any("can be written by others" in r.message for r in caplog.records)
    assert calc.build_ms > 0 and calc.loaded_from is not None and calc.loaded_from.parent == tmp_path / "own-cache"
    assert (shared / "control.wasm.wprog").read_bytes() == before
    assert (calc.calculate(INPUTS).values == _snarkjs_values(c)).all()


def _code_span(body: bytes) -> tuple[int, int]:
    """(offset, length) of the first path's coded instructions in a program body (program.hpp write_path)."""
    import struct

    nc = struct.unpack_from("<I", body, 12)[0]
    at = 12 + 5 * 4 + 8 + 32 * nc
    return at + 8, struct.unpack_from("<Q", body, at)[0]


def test_a_large_program_loads_block_by_block_and_damage_in_its_code_is_refused_or_stays_in_bounds(tmp_path):
    """The load decodes and checks a path's code 4096 instructions at a time: a program of many blocks round-trips
    and replays to snarkjs's witness once loaded; bytes flipped in its code either fail the load's checks
    (ValueError) or load a program whose replay stays in its frame (a status, never a crash)."""
    import random

    sha = compiled("sha256.circom", "bn128", include_circomlib=True)
    wasm = tmp_path / "sha.wasm"
    shutil.copy(sha.wasm, wasm)
    NativeCalculator(wasm, cache=False)
    calc = NativeCalculator(wasm, cache=False)  # loaded from its file
    assert calc.build_ms == 0 and calc.program.path_stats()[0]["instructions"] > 10 * 4096
    inputs = {"in": [random.Random(3).getrandbits(1) for _ in range(64)]}
    out = tmp_path / "w.wtns"
    calc.calculate_to_file(inputs, out)
    assert out.read_bytes() == sha.snarkjs_witness(inputs).read_bytes()
    body = calc.program.serialize()
    Program = type(calc.program)
    assert Program.load(calc.program.curve, body).serialize() == body
    values = bytes(32 * calc.input_size)
    start, length = _code_span(body)
    rng = random.Random(17)
    refused = 0
    for _ in range(150):
        damaged = bytearray(body)
        for _ in range(rng.choice((1, 3))):
            damaged[start + rng.randrange(length)] ^= 1 << rng.randrange(8)
        try:
            program = Program.load(calc.program.curve, bytes(damaged))
        except ValueError as exc:
            assert "native witness program" in str(exc)
            refused += 1
            continue
        status, _, _, _ = program.evaluate(values, bytearray(32 * program.frame_rows))
        assert status in (0, 1, 2)
    assert 0 < refused < 150
