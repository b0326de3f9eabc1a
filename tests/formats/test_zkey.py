"""zkey reader against `snarkjs zkey export json`, the coefs representation, and bad keys."""

from __future__ import annotations

import json
import struct
import weakref

import numpy as np
import pytest

import oracle
from fmt_helpers import join, patch_section, split, zkey_json
from snarkd.curves.params import curve_by_name
from snarkd.errors import FormatError
from snarkd.formats import read_r1cs, read_zkey, vk_json
from snarkd.formats.binfile import limbs_to_int
from snarkd.curves.encoding import g1_to_json, g2_to_json
from snarkd.formats.zkey import HEADER_POINTS, PointCheckUnavailable


def _native_available() -> bool:
    try:
        from snarkd.native import _core  # noqa: F401

        return True
    except ImportError:
        return False


def _g1s(z, arr):
    return [g1_to_json(z.curve, p) for p in arr]


def _g2s(z, arr):
    return [g2_to_json(z.curve, p) for p in arr]


def test_matches_snarkjs_export_json(all_circuits):
    for case in all_circuits:
        js = zkey_json(case.zkey)
        with read_zkey(case.zkey) as z:
            L = z.n8q // 8
            assert z.curve is curve_by_name(case.curve)
            assert (z.n8q, z.q, z.n8r, z.r) == (js["n8q"], int(js["q"]), js["n8r"], int(js["r"]))
            assert (z.n_vars, z.n_public, z.domain_size, z.domain_power) == (js["nVars"], js["nPublic"], js["domainSize"], js["power"])
            for name, g in HEADER_POINTS:
                pt = getattr(z, name)
                assert pt.shape == (2 * g * L,)
                want = js[f"vk_{name[:-1]}_{name[-1]}"]
                got = g1_to_json(z.curve, pt) if g == 1 else g2_to_json(z.curve, pt)
                assert got == want, (case.name, name)
            assert z.ic.shape == (z.n_public + 1, 2 * L) and _g1s(z, z.ic) == js["IC"]
            assert z.a.shape == (z.n_vars, 2 * L) and _g1s(z, z.a) == js["A"]
            assert z.b1.shape == (z.n_vars, 2 * L) and _g1s(z, z.b1) == js["B1"]
            assert z.b2.shape == (z.n_vars, 4 * L) and _g2s(z, z.b2) == js["B2"]
            nc = z.n_vars - z.n_public - 1
            assert z.c.shape == (nc, 2 * L) and _g1s(z, z.c) == js["C"][z.n_public + 1 :]
            assert all(x is None for x in js["C"][: z.n_public + 1])
            assert z.h.shape == (z.domain_size, 2 * L) and _g1s(z, z.h) == js["hExps"]
            # coefs: export json shows the plain coefficient; the file holds coef·R² mod r
            ent = z.coef_entries
            assert z.n_coefs == len(js["ccoefs"]) == len(ent)
            assert int.from_bytes(z.coefs[:4], "little") == z.n_coefs
            R2inv = pow(1 << 256, -2, z.r)
            for e, j in zip(ent, js["ccoefs"]):
                assert (int(e["matrix"]), int(e["constraint"]), int(e["signal"])) == (j["matrix"], j["constraint"], j["signal"])
                assert limbs_to_int(e["value"]) * R2inv % z.r == int(j["value"])
            assert z.nbytes == case.zkey.stat().st_size


def test_coefs_against_r1cs(all_circuits):
    """value·R⁻² mod r is the r1cs A/B coefficient; plus one public row per public signal."""
    for case in all_circuits:
        r1 = read_r1cs(case.r1cs)
        m = r1.header.n_constraints
        with read_zkey(case.zkey) as z:
            R2inv = pow(1 << 256, -2, z.r)
            got: dict = {}
            for e in z.coef_entries:
                key = (int(e["matrix"]), int(e["constraint"]), int(e["signal"]))
                assert key not in got
                got[key] = limbs_to_int(e["value"]) * R2inv % z.r
            want = {}
            for mi, mat in enumerate((r1.a, r1.b)):
                for i in range(m):
                    for w, v in mat.row(i):
                        want[(mi, i, w)] = v
            for s in range(z.n_public + 1):
                want[(0, m + s, s)] = 1
            assert got == want, case.name
            # a coefficient of -1 is stored as (r-1)·R² mod r
            neg = [k for k, v in want.items() if v == z.r - 1]
            if neg:
                e = next(e for e in z.coef_entries if (int(e["matrix"]), int(e["constraint"]), int(e["signal"])) == neg[0])
                assert limbs_to_int(e["value"]) == (z.r - 1) * pow(2, 512, z.r) % z.r


def test_zero_copy(chain_circuit):
    z = read_zkey(chain_circuit.zkey)
    for arr in (z.alpha1, z.ic, z.a, z.b1, z.b2, z.c, z.h):
        assert arr.dtype == np.dtype("<u8") and not arr.flags.writeable and not arr.flags.owndata
    assert isinstance(z.coefs, memoryview)
    h = z.h
    z.close()
    assert z.closed and z.h is None
    z.close()
    assert h.sum() != 0  # a view taken out earlier stays valid after close
    del h
    z = read_zkey(chain_circuit.zkey)
    mm = weakref.ref(z._bf._mm)
    z.close()
    assert mm() is None  # no view left: the mapping is gone


def test_sections_by_id(chain_circuit, tmp_path):
    """Sections in setup's order (1,2,4,3,9,8,5,6,7,10) read the same as 1..10."""
    magic, version, secs = split(chain_circuit.zkey)
    assert [s for s, _ in secs] == list(range(1, 11))  # after zkey contribute
    by = dict(secs)
    p = tmp_path / "setup-order.zkey"
    p.write_bytes(join(magic, version, [[i, by[i]] for i in (1, 2, 4, 3, 9, 8, 5, 6, 7, 10)]))
    with read_zkey(chain_circuit.zkey) as a, read_zkey(p) as b:
        for f in ("alpha1", "beta2", "ic", "a", "b1", "b2", "c", "h"):
            assert np.array_equal(getattr(a, f), getattr(b, f))
        assert bytes(a.coefs) == bytes(b.coefs)


def test_export_vk_matches_snarkjs(all_circuits):
    """vk_json == `snarkjs zkey export verificationkey` output, as JSON."""
    for case in all_circuits:
        want = json.loads(case.vk.read_text())
        with read_zkey(case.zkey) as z:
            got = vk_json(z)
        assert json.loads(json.dumps(got)) == want, case.name


# -- bad keys ------------------------------------------------------------------


def _write(tmp_path, data, name="bad.zkey"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _expect(p, *needles, check_points=False, exc=FormatError):
    with pytest.raises(exc) as e:
        read_zkey(p, check_points=check_points)
    msg = str(e.value)
    assert str(p) in msg, msg
    for n in needles:
        assert n in msg, msg
    return e.value


def _hdr_layout(z):
    """Byte offsets inside §2: nVars, nPublic, domainSize, first point."""
    o = 4 + z.n8q + 4 + z.n8r
    return {"n_vars": o, "n_public": o + 4, "domain": o + 8, "points": o + 12}


def _mont(x, z):
    return (x * (1 << (8 * z.n8q)) % z.q).to_bytes(z.n8q, "little")


def test_protocol_patched(chain_circuit, tmp_path):
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 1, lambda b: struct.pack("<I", 10)))
    _expect(p, "section 1 (protocol)", "protocol 10 (FFLONK) is not supported")


def test_protocol_plonk_from_snarkjs(chain_circuit, tmp_path):
    pt = oracle.ptau(chain_circuit.curve, 6)

    def build(d):
        oracle.snarkjs("plonk", "setup", chain_circuit.r1cs, pt, d / "plonk.zkey")

    zk = oracle._cached(f"plonk-{chain_circuit.circuit.dir.name}", build) / "plonk.zkey"
    _expect(zk, "section 1 (protocol)", "protocol 2 (PLONK) is not supported")


def test_section_sizes(chain_circuit, tmp_path):
    for sid, name in ((3, "IC"), (5, "A"), (6, "B1"), (7, "B2"), (8, "C"), (9, "H")):
        p = _write(tmp_path, patch_section(chain_circuit.zkey, sid, lambda b: b[:-8]), f"bad{sid}.zkey")
        _expect(p, f"section {sid} ({name})", "expected")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 4, lambda b: b + b"\0" * 44), "bad4.zkey")
    _expect(p, "section 4 (coefs)", "entries")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b + b"\0" * 8), "bad2.zkey")
    _expect(p, "section 2 (header)", "expected")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 1, lambda b: b + b"\0"), "bad1.zkey")
    _expect(p, "section 1 (protocol)")


def test_nvars_changed(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        o = _hdr_layout(z)["n_vars"]
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + struct.pack("<I", 14) + b[o + 4 :]))
    _expect(p, "section 5 (A)", "nVars = 14")


def test_domain_not_power_of_two(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        o = _hdr_layout(z)["domain"]
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + struct.pack("<I", 24) + b[o + 4 :]))
    _expect(p, "section 2 (header)", "domainSize = 24 is not a power of two")


def test_unknown_curve(chain_circuit, tmp_path):
    def patch(b):
        n8q = int.from_bytes(b[:4], "little")
        return b[:4] + (12345).to_bytes(n8q, "little") + b[4 + n8q :]

    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, patch))
    _expect(p, "section 2 (header)", "base field", "12345")


def test_r_mismatch(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        o = 4 + z.n8q + 4
        bad_r = z.r + 2
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + bad_r.to_bytes(32, "little") + b[o + 32 :]))
    _expect(p, "section 2 (header)", "scalar field r", "does not match")


def test_coef_out_of_range(chain_circuit, tmp_path):
    # first entry: matrix at +4, constraint at +8, signal at +12
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 4, lambda b: b[:4] + struct.pack("<I", 2) + b[8:]), "m.zkey")
    _expect(p, "section 4 (coefs)", "entry 0", "matrix 2")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 4, lambda b: b[:8] + struct.pack("<I", 10**6) + b[12:]), "c.zkey")
    _expect(p, "section 4 (coefs)", "entry 0", "constraint 1000000")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 4, lambda b: b[:12] + struct.pack("<I", 10**6) + b[16:]), "s.zkey")
    _expect(p, "section 4 (coefs)", "entry 0", "signal 1000000")
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 4, lambda b: b[:16] + b"\xff" * 32 + b[48:]), "v.zkey")
    _expect(p, "section 4 (coefs)", "entry 0", "not canonical")


def test_noncanonical_header_point(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        o = _hdr_layout(z)["points"] + 2 * z.n8q + z.n8q  # beta1.y
        q, n8q = z.q, z.n8q
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + q.to_bytes(n8q, "little") + b[o + n8q :]))
    _expect(p, "section 2 (header)", "point beta1: coordinate y is not canonical")


@pytest.mark.parametrize("sid,name,index,coord", [(9, "H", 3, 1), (7, "B2", 4, 3), (5, "A", 0, 0)])
def test_noncanonical_point(chain_circuit, tmp_path, sid, name, index, coord):
    with read_zkey(chain_circuit.zkey) as z:
        n8q = z.n8q
        width = (4 if sid == 7 else 2) * n8q
    o = index * width + coord * n8q
    p = _write(tmp_path, patch_section(chain_circuit.zkey, sid, lambda b: b[:o] + b"\xff" * n8q + b[o + n8q :]))
    cname = ("x.c0", "x.c1", "y.c0", "y.c1")[coord] if sid == 7 else ("x", "y")[coord]
    _expect(p, f"section {sid} ({name})", f"point {index}: coordinate {cname} is not canonical")


def test_off_curve_header_point(chain_circuit, tmp_path):
    """Caught by the Python check of the header points (no native core needed)."""
    with read_zkey(chain_circuit.zkey) as z:
        o = _hdr_layout(z)["points"]
        one = _mont(1, z)
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + one + one + b[o + 2 * len(one) :]))
    read_zkey(p).close()  # canonical: only check_points sees it
    _expect(p, "section 2 (header)", "point alpha1 is not on the", "G1", check_points=True)


def test_off_curve_g2_header_point(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        o = _hdr_layout(z)["points"] + 2 * 2 * z.n8q + 4 * z.n8q  # gamma2
        one = _mont(1, z)
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 2, lambda b: b[:o] + one * 4 + b[o + 4 * len(one) :]))
    _expect(p, "section 2 (header)", "point gamma2 is not on the", "G2", check_points=True)


def test_off_curve_ic_point(chain_circuit, tmp_path):
    with read_zkey(chain_circuit.zkey) as z:
        one = _mont(1, z)
    o = 1 * 2 * len(one)
    p = _write(tmp_path, patch_section(chain_circuit.zkey, 3, lambda b: b[:o] + one + one + b[o + 2 * len(one) :]))
    _expect(p, "section 3 (IC)", "point 1 is not on the", check_points=True)


def test_check_points_good_key(all_circuits):
    for case in all_circuits:
        if _native_available():
            read_zkey(case.zkey, check_points=True).close()
        else:
            with pytest.raises(PointCheckUnavailable) as e:
                read_zkey(case.zkey, check_points=True)
            assert "native core" in str(e.value) and str(case.zkey) in str(e.value)


@pytest.mark.parametrize("sid,name,index", [(9, "H", 2), (5, "A", 5), (7, "B2", 4), (8, "C", 0)])
def test_off_curve_point_native(chain_circuit, tmp_path, sid, name, index):
    pytest.importorskip("snarkd.native._core")
    with read_zkey(chain_circuit.zkey) as z:
        one = _mont(1, z)
    g = 4 if sid == 7 else 2
    o = index * g * len(one)
    p = _write(tmp_path, patch_section(chain_circuit.zkey, sid, lambda b: b[:o] + one * g + b[o + g * len(one) :]))
    read_zkey(p).close()
    _expect(p, f"section {sid} ({name})", f"point {index} is not on the", check_points=True)
