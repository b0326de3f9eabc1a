"""The two pairing-friendly curves snarkd proves on, as snarkjs names them."""

from __future__ import annotations

from collections import namedtuple


class Curve(namedtuple("Curve", "name native q r n8q n8r two_adicity g1 g2 nqr", defaults=(5,))):
    """A curve's constants (immutable, compared and hashed by value). name: snarkjs's name, written into proof.json
    ("bn128", "bls12381"); native: submodule of snarkd.native._core; q, r: base and scalar field moduli (r the
    group order); n8q, n8r: bytes per base / scalar field element; g1: the G1 generator (x, y), plain integers;
    g2: the G2 generator ((x.c0, x.c1), (y.c0, y.c1)); nqr: snarkjs (ffjavascript) derives roots of unity from
    the smallest quadratic non-residue, 5 on both curves, not from a multiplicative generator.

    A named tuple, not a frozen dataclass: dataclasses (it imports inspect, ast, dis, tokenize) cost every
    `snarkd prove` process ~12 ms of its start-up (bench/cpu-notes.md, round 7)."""

    __slots__ = ()

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
    g1=(1, 2),
    g2=((10857046999023057135944570762232829481370756359578518086990519993285655852781,
         11559732032986387107991004021392285783925812861821192530917403151452391805634),
        (8495653923123431417604973247489272438418190587263600148770280649306958101930,
         4082367875863433681332203403145435568316851327593401208105741076214120093531)),
)

BLS12_381 = Curve(
    name="bls12381",
    native="bls12_381",
    q=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    r=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    n8q=48,
    n8r=32,
    two_adicity=32,
    g1=(0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
        0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1),
    g2=((0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
         0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E),
        (0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
         0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE)),
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
