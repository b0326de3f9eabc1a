"""Container checks shared by every format: magic, version, section table."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from fmt_helpers import join, split
from snarkd.errors import FormatError
from snarkd.formats import read_r1cs_header, read_wtns, read_zkey
from snarkd.formats.binfile import BinFile

READERS = {"zkey": read_zkey, "wtns": read_wtns, "r1cs": read_r1cs_header}


@pytest.fixture(params=["zkey", "wtns", "r1cs"])
def sample(request, chain_circuit):
    kind = request.param
    path = {"zkey": chain_circuit.zkey, "wtns": chain_circuit.wtns, "r1cs": chain_circuit.r1cs}[kind]
    return kind, path, READERS[kind]


def _expect(reader, path, *needles):
    with pytest.raises(FormatError) as e:
        reader(path)
    msg = str(e.value)
    assert str(path) in msg, msg
    for n in needles:
        assert n in msg, msg
    return e.value


def test_reads(sample):
    kind, path, reader = sample
    obj = reader(path)
    if hasattr(obj, "close"):
        obj.close()


def test_missing_file(sample, tmp_path):
    kind, _, reader = sample
    _expect(reader, tmp_path / f"nope.{kind}", "file not found")


def test_directory(sample, tmp_path):
    kind, _, reader = sample
    _expect(reader, tmp_path, "directory")


def test_empty_file(sample, tmp_path):
    kind, _, reader = sample
    p = tmp_path / f"empty.{kind}"
    p.write_bytes(b"")
    _expect(reader, p, "too short")


def test_wrong_magic(sample, tmp_path):
    kind, path, reader = sample
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(b"xxxx" + path.read_bytes()[4:])
    _expect(reader, p, "magic", repr(kind.encode()))


def test_other_format_magic(sample, tmp_path):
    """A wtns passed where a zkey is expected (and so on) is named as such."""
    kind, path, reader = sample
    other = {"zkey": "wtns", "wtns": "r1cs", "r1cs": "zkey"}[kind]
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(other.encode() + path.read_bytes()[4:])
    _expect(reader, p, f"not a {kind} file")


def test_unsupported_version(sample, tmp_path):
    kind, path, reader = sample
    data = path.read_bytes()
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(data[:4] + struct.pack("<I", 77) + data[8:])
    _expect(reader, p, "unsupported", "version 77")


def test_truncated_section_header(sample, tmp_path):
    kind, path, reader = sample
    magic, version, secs = split(path)
    p = tmp_path / f"bad.{kind}"
    # declare one more section than present: its header is past EOF
    p.write_bytes(join(magic, version, secs, n_sections=len(secs) + 1))
    _expect(reader, p, "truncated", f"section #{len(secs) + 1} of {len(secs) + 1}")


def test_truncated_file(sample, tmp_path):
    kind, path, reader = sample
    magic, version, secs = split(path)
    last = secs[-1][0]
    data = path.read_bytes()
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(data[:-5])
    e = _expect(reader, p, "runs past the end of the file")
    assert str(e.section).startswith(str(last))


def test_size_past_eof(sample, tmp_path):
    """A declared size larger than the payload: the section 'overlaps' the next one."""
    kind, path, reader = sample
    magic, version, secs = split(path)
    data = bytearray(path.read_bytes())
    sid = secs[0][0]
    # first section header at byte 12: u32 id, u64 size
    struct.pack_into("<Q", data, 16, len(data))
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(bytes(data))
    e = _expect(reader, p, "runs past the end of the file", f"section {sid}")
    assert e.section is not None


def test_overlapping_section(sample, tmp_path):
    """Size of the first section enlarged by 12 bytes: it swallows the next
    section's header; the table no longer adds up to the file."""
    kind, path, reader = sample
    data = bytearray(path.read_bytes())
    (size,) = struct.unpack_from("<Q", data, 16)
    struct.pack_into("<Q", data, 16, size + 12)
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError) as e:
        reader(p)
    assert str(p) in str(e.value) and "section" in str(e.value)


def test_duplicate_section(sample, tmp_path):
    kind, path, reader = sample
    magic, version, secs = split(path)
    dup = secs[0][0]
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(join(magic, version, secs + [secs[0]]))
    _expect(reader, p, "duplicate section id", f"section {dup}")


def test_missing_section(sample, tmp_path):
    kind, path, reader = sample
    magic, version, secs = split(path)
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(join(magic, version, [s for s in secs if s[0] != 2]))
    _expect(reader, p, "section 2", "missing")


def test_trailing_bytes(sample, tmp_path):
    kind, path, reader = sample
    p = tmp_path / f"bad.{kind}"
    p.write_bytes(path.read_bytes() + b"\0\0\0")
    _expect(reader, p, "trailing bytes")


def test_binfile_api(chain_circuit):
    bf = BinFile.open(chain_circuit.zkey, b"zkey", [1])
    try:
        assert sorted(bf.sections) == list(range(1, 11))
        off, size = bf.sections[2]
        mv = bf.section(2, "header")
        assert isinstance(mv, memoryview) and len(mv) == size
        assert bytes(mv[:4]) == chain_circuit.zkey.read_bytes()[off : off + 4]
        with pytest.raises(FormatError) as e:
            bf.section(42, "nothing")
        assert "section 42 (nothing)" in str(e.value) and str(chain_circuit.zkey) in str(e.value)
    finally:
        bf.close()
    bf.close()  # idempotent


def test_binfile_maps_through_the_guard(tmp_path, chain_circuit):
    key = tmp_path / "k.zkey"
    key.write_bytes(chain_circuit.zkey.read_bytes())
    bf = BinFile.open(key, b"zkey", (1,))
    assert bf.changed() == ""
    os.truncate(key, 200)
    assert int(np.frombuffer(bf.buffer, dtype=np.uint8).sum()) >= 0  # reads the whole file: no SIGBUS
    assert bf.changed().startswith(f"truncated from {len(chain_circuit.zkey.read_bytes())} to 200 bytes")
    bf.close()
