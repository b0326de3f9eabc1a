"""The aggregation SRS: generation, the file (every field checked), specialization, from ptau-like objects."""

from __future__ import annotations

import json

import numpy as np
import pytest

from snarkd.aggregate import srs as S
from snarkd.aggregate.group import Group
from snarkd.curves.params import BLS12_381, BN254
from snarkd.errors import InputError
from snarkd.formats import checked_header


@pytest.fixture(scope="module", params=[BN254, BLS12_381], ids=["bn128", "bls12381"])
def dev(request):
    return S.dev_srs(request.param, 4, a=5, b=7)


def test_dev_srs_holds_the_powers(dev):
    G = Group(dev.curve)
    g, h = G.generator_g1(), G.generator_g2()
    r = dev.curve.r
    assert dev.g1_a.shape == (8, G.g1_bytes) and dev.g2_b.shape == (4, G.g2_bytes)
    for i in (0, 1, 7):
        assert dev.g1_a[i].tobytes() == G.g1_mul(g, pow(5, i, r))
        assert dev.g1_b[i].tobytes() == G.g1_mul(g, pow(7, i, r))
    for i in (0, 3):
        assert dev.g2_a[i].tobytes() == G.g2_mul(h, pow(5, i, r))
        assert dev.g2_b[i].tobytes() == G.g2_mul(h, pow(7, i, r))
    key = dev.specialize(4)
    assert key.w1 == dev.g1_a[4:8].tobytes() and key.v2 == dev.g2_b[:4].tobytes()
    assert dev.specialize(2).w2 == dev.g1_b[2:4].tobytes()
    for bad in (1, 3, 8):
        with pytest.raises(InputError):
            dev.specialize(bad)


def test_file_round_trip(dev, tmp_path):
    path = tmp_path / "a.srs"
    S.write_srs(path, dev)
    back = S.read_srs(path)
    assert back.dev is True and back.max_n == 4 and back.curve is dev.curve and back.id == dev.id
    assert back.g2_b.tobytes() == dev.g2_b.tobytes() and back.g1_a.tobytes() == dev.g1_a.tobytes()


def rewrite(path: Path, header: dict | None = None, body: bytes | None = None, fix_crc: bool = True) -> None:
    data = (path.parent / "base.srs").read_bytes()
    old, off = checked_header.unpack(data, S.MAGIC, S.VERSION, "x", ValueError)
    body = data[off:] if body is None else body
    header = dict(old if header is None else header)
    if fix_crc and "body_crc32c" in header:
        header["body_crc32c"] = checked_header.crc32c(body)
    path.write_bytes(checked_header.pack(S.MAGIC, S.VERSION, json.dumps(header).encode()) + body)


def corrupt_cases(dev, tmp_path):
    base = tmp_path / "base.srs"
    S.write_srs(base, dev)
    data = base.read_bytes()
    hdr, off = checked_header.unpack(data, S.MAGIC, S.VERSION, "x", ValueError)
    G = Group(dev.curve)
    cases = {
        "magic": lambda p: p.write_bytes(b"XXXXXXXX" + data[8:]),
        "version": lambda p: p.write_bytes(data[:8] + (2).to_bytes(4, "little") + data[12:]),
        "header crc": lambda p: p.write_bytes(data[:20] + bytes([data[20] ^ 1]) + data[21:]),
        "empty": lambda p: p.write_bytes(b""),
        "truncated body": lambda p: rewrite(p, body=data[off:-1]),
        "body flip": lambda p: p.write_bytes(data[:-1] + bytes([data[-1] ^ 1])),
        "extra field": lambda p: rewrite(p, {**hdr, "x": 1}),
        "curve": lambda p: rewrite(p, {**hdr, "curve": "secp256k1"}),
        "max_n": lambda p: rewrite(p, {**hdr, "max_n": 3}),
        "max_n bigger": lambda p: rewrite(p, {**hdr, "max_n": 8}),
        "dev": lambda p: rewrite(p, {**hdr, "dev": "yes"}),
        "dev false without sources": lambda p: rewrite(p, {**hdr, "dev": False}),
        "sources": lambda p: rewrite(p, {**hdr, "sources": ["ab"]}),
        "id": lambda p: rewrite(p, {**hdr, "id": "00" * 32}),
        "crc type": lambda p: rewrite(p, {**hdr, "body_crc32c": "1"}, fix_crc=False),
        # checksummed bodies whose points are wrong
        "generator": lambda p: rewrite(p, body=G.g1_mul(G.generator_g1(), 2) + data[off + G.g1_bytes :]),
        "off curve": lambda p: rewrite(p, body=data[off : off + G.g1_bytes] + bytes([data[off + G.g1_bytes] ^ 1]) + data[off + G.g1_bytes + 1 :]),
        "same secrets": lambda p: rewrite(p, body=data[off : off + 2 * dev.max_n * G.g1_bytes] * 2 + data[off + 4 * dev.max_n * G.g1_bytes :]),
        "a1 and a2 of other secrets": lambda p: rewrite(p, body=data[off : off + 4 * dev.max_n * G.g1_bytes] + dev.g2_b.tobytes() + dev.g2_a.tobytes()),
        # powers that are valid points, checksum and id recomputed, but not successive powers of one secret
        # (issue 33, finding 1: read_srs checked only the verifier points and the CRC): refused by specialize
        "two G2 a-powers swapped": lambda p: rewrite(p, body=_swap(data[off:], 4 * dev.max_n * G.g1_bytes, G.g2_bytes, 2, 3)),
        "two G1 b-powers swapped": lambda p: rewrite(p, body=_swap(data[off:], 2 * dev.max_n * G.g1_bytes, G.g1_bytes, 4, 6)),
        "a G1 power replaced": lambda p: rewrite(p, body=_put(data[off:], 3 * G.g1_bytes, G.g1_mul(G.generator_g1(), 99))),
        "the last G2 b-power replaced": lambda p: rewrite(p, body=data[off:][: -G.g2_bytes] + G.g2_mul(G.generator_g2(), 99)),
    }
    return cases


def _swap(body: bytes, start: int, width: int, i: int, j: int) -> bytes:
    b = bytearray(body)
    pi, pj = start + i * width, start + j * width
    b[pi : pi + width], b[pj : pj + width] = body[pj : pj + width], body[pi : pi + width]
    return bytes(b)


def _put(body: bytes, at: int, point: bytes) -> bytes:
    return body[:at] + point + body[at + len(point) :]


def test_a_file_rewritten_in_place_with_its_mtime_restored_reads_as_changed(dev, tmp_path):
    """changed() compares the content (a body hash), not only size and mtime: the daemon reads it again."""
    import os

    path = tmp_path / "a.srs"
    S.write_srs(path, dev)
    srs = S.read_srs(path)
    assert srs.changed() == "" and srs.verifier_points() == dev.verifier_points()
    st = os.stat(path)
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    with open(path, "r+b") as f:  # in place: the mapping sees it
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert "content changed" in srs.changed()
    assert srs.verifier_points() == dev.verifier_points() and srs.id == dev.id  # the checked copies


def test_a_fifo_or_a_device_as_the_srs_is_refused_at_once(tmp_path):
    import os
    import time

    fifo = tmp_path / "fifo.srs"
    os.mkfifo(fifo)
    for p in (fifo, "/dev/zero"):
        t = time.monotonic()
        with pytest.raises(InputError, match="not a regular file"):
            S.read_srs(p)
        with pytest.raises(InputError, match="not a regular file"):
            S.read_srs_max_n(p)
        assert time.monotonic() - t < 5


def test_every_corruption_is_an_input_error_naming_the_file(dev, tmp_path):
    for name, make in corrupt_cases(dev, tmp_path).items():
        p = tmp_path / f"{name.replace(' ', '_')}.srs"
        make(p)
        with pytest.raises(InputError) as info:
            S.read_srs(p).specialize(dev.max_n)  # the read, or the powers' check before they are used
        assert str(p) in str(info.value), name


def test_only_the_prefix_a_call_uses_is_checked(dev, tmp_path):
    """A power past 2n (G1) / n (G2) is not used for n proofs: not checked (a large SRS is not scanned whole
    for a small aggregate), and refused once a larger n uses it."""
    G = Group(dev.curve)
    base = tmp_path / "base.srs"
    S.write_srs(base, dev)
    data = base.read_bytes()
    _, off = checked_header.unpack(data, S.MAGIC, S.VERSION, "x", ValueError)
    p = tmp_path / "late.srs"
    rewrite(p, body=data[off:][: -G.g2_bytes] + G.g2_mul(G.generator_g2(), 99))  # the last G2 b-power
    srs = S.read_srs(p)
    assert srs.specialize(2).n == 2
    with pytest.raises(InputError, match=r"G2 b-powers\[0\.\.4\) are not successive powers"):
        srs.specialize(4)
    with pytest.raises(InputError):
        S.read_srs(tmp_path / "missing.srs")


class FakePtau:
    """The formats/ptau.py interface (curve, power, tau_g1, tau_g2, path) over dev secrets."""

    def __init__(self, curve, tau: int, power: int, path=None):
        self.curve, self.power, self.path = curve, power, path
        self._srs = S.dev_srs(curve, 1 << power, a=tau, b=tau + 1)

    def tau_g1(self, count: int) -> np.ndarray:
        assert count <= (1 << (self.power + 1)) - 1
        return self._srs.g1_a[:count]

    def tau_g2(self, count: int) -> np.ndarray:
        assert count <= 1 << self.power
        return self._srs.g2_a[:count]


def test_srs_from_ptau_objects(tmp_path):
    a, b = FakePtau(BN254, 11, 3, tmp_path / "a"), FakePtau(BN254, 13, 3, tmp_path / "b")
    for x in (a, b):
        x.path.write_bytes(b"ptau " + x.path.name.encode())
    srs = S.srs_from_ptau(a, b)
    assert srs.max_n == 4 and not srs.dev and len(srs.sources) == 2  # power 3 serves n up to 2^2
    want = S.dev_srs(BN254, 4, a=11, b=13)
    assert srs.g1_a.tobytes() == want.g1_a.tobytes() and srs.g2_b.tobytes() == want.g2_b.tobytes()
    S.write_srs(tmp_path / "p.srs", srs)
    assert S.read_srs(tmp_path / "p.srs").id == want.id
    assert S.srs_from_ptau(a, b, 2).max_n == 2
    with pytest.raises(InputError):
        S.srs_from_ptau(a, b, 8)
    with pytest.raises(InputError):
        S.srs_from_ptau(a, FakePtau(BN254, 11, 3))  # one secret twice
    with pytest.raises(InputError):
        S.srs_from_ptau(a, FakePtau(BLS12_381, 13, 3))
