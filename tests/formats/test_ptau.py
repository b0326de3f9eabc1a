"""snarkd.formats.ptau against real snarkjs .ptau files (both curves): the points it hands out are
snarkjs's own, and every malformed file is InputError naming the file."""

from __future__ import annotations

import pytest

import oracle
from snarkd.errors import InputError
from snarkd.formats.ptau import read_ptau
from snarkd.native import _pairing
from snarkd.curves.params import curve_by_name

POWER = 6  # the fixture circuits' ptau (oracle.ptau): one contribution, prepared for phase 2


@pytest.fixture(scope="module")
def ptau_path(curve):
    return oracle.ptau(curve, POWER)


def test_reads_snarkjs_layout(curve, ptau_path):
    c = curve_by_name(curve)
    pair = getattr(_pairing, c.native)
    with read_ptau(ptau_path) as p:
        assert p.curve is c and p.power == POWER
        g1, g2 = p.tau_g1(p.n_g1), p.tau_g2(p.n_g2)
        assert g1.shape == (2 ** (POWER + 1) - 1, 2 * c.n8q) and g2.shape == (2**POWER, 4 * c.n8q)
        assert g1.dtype.name == "uint8"
        # [tau^0] are the generators, [tau^1] e(tau G1, G2) == e(G1, tau G2): snarkjs's points, our layout
        x, y = c.g1
        assert g1[0].tobytes() == b"".join((v * c.rq % c.q).to_bytes(c.n8q, "little") for v in (x, y))
        assert all(pair.g1_on_curve(g1[i].tobytes()) for i in range(0, len(g1), 17))
        assert all(pair.g2_on_curve(g2[i].tobytes()) for i in range(0, len(g2), 9))
        lhs = pair.pairing(g1[1].tobytes(), g2[0].tobytes())
        assert lhs == pair.pairing(g1[0].tobytes(), g2[1].tobytes())
        assert p.tau_g1(0).shape == (0, 2 * c.n8q)


def test_count_above_what_the_file_holds(ptau_path):
    with read_ptau(ptau_path) as p:
        with pytest.raises(InputError, match=rf"{ptau_path.name}.*200 G1 powers asked for, but the file holds 127"):
            p.tau_g1(200)
        with pytest.raises(InputError, match=r"65 G2 powers asked for, but the file holds 64"):
            p.tau_g2(65)


def _mutated(tmp_path, src, fn, name="bad.ptau"):
    data = bytearray(src.read_bytes())
    fn(data)
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out


def test_malformed_files_are_input_errors(curve, ptau_path, tmp_path):
    size = ptau_path.stat().st_size
    with read_ptau(ptau_path) as p:
        hdr = p.file.offset(1)
        n8 = p.curve.n8q
    cases = {
        "truncated.ptau": lambda d: d.__delitem__(slice(size // 2, None)),
        "magic.ptau": lambda d: d.__setitem__(slice(0, 4), b"zkey"),
        "version.ptau": lambda d: d.__setitem__(slice(4, 8), (7).to_bytes(4, "little")),
        "prime.ptau": lambda d: d.__setitem__(hdr + 4, d[hdr + 4] ^ 1),
        "power.ptau": lambda d: d.__setitem__(slice(hdr + 4 + n8, hdr + 8 + n8), (POWER + 1).to_bytes(4, "little")),
        "n8.ptau": lambda d: d.__setitem__(slice(hdr, hdr + 4), (40).to_bytes(4, "little")),
    }
    for name, fn in cases.items():
        bad = _mutated(tmp_path, ptau_path, fn, name)
        with pytest.raises(InputError, match=name):
            read_ptau(bad).close()
    with pytest.raises(InputError, match="missing.ptau"):
        read_ptau(tmp_path / "missing.ptau")
