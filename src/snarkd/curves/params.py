"""The two pairing-friendly curves snarkd proves on, as snarkjs names them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Curve:
    name: str  # snarkjs's name, written into proof.json ("bn128", "bls12381")
    native: str  # submodule of snarkd.native._core
    q: int  # base field modulus
    r: int  # scalar field modulus (group order)
    n8q: int  # bytes per base field element
    n8r: int  # bytes per scalar field element
    two_adicity: int
    # snarkjs (ffjavascript) derives roots of unity from the smallest quadratic
    # non-residue, 5 on both curves -- not from a multiplicative generator.
    nqr: int = 5

    @property
    def fq_limbs(self) -> int:
        return self.n8q // 8

    @property
    def g1_bytes(self) -> int:
        return 2 * self.n8q

    @property
    def g2_bytes(self) -> int:
        return 4 * self.n8q

    @property
    def rq(self) -> int:
        """Montgomery radix of the base field as stored in zkeys."""
        return 1 << (8 * self.n8q)

    @property
    def rr(self) -> int:
        return 1 << (8 * self.n8r)


BN254 = Curve(
    name="bn128",
    native="bn254",
    q=21888242871839275222246405745257275088696311157297823662689037894645226208583,
    r=21888242871839275222246405745257275088548364400416034343698204186575808495617,
    n8q=32,
    n8r=32,
    two_adicity=28,
)

BLS12_381 = Curve(
    name="bls12381",
    native="bls12_381",
    q=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    r=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    n8q=48,
    n8r=32,
    two_adicity=32,
)

CURVES = (BN254, BLS12_381)

_ALIASES = {"bn128": BN254, "bn254": BN254, "alt_bn128": BN254, "bls12381": BLS12_381, "bls12-381": BLS12_381, "bls12_381": BLS12_381}


def curve_by_name(name: str) -> Curve:
    try:
        return _ALIASES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown curve {name!r} (expected bn128 or bls12381)") from None


def curve_by_q(q: int) -> Curve | None:
    return next((c for c in CURVES if c.q == q), None)


def curve_by_r(r: int) -> Curve | None:
    return next((c for c in CURVES if c.r == r), None)
