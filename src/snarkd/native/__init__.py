"""Native CPU core: Montgomery fields, G1/G2, Pippenger MSM, NTT, Groth16 pieces."""
from . import _core
from ._core import bn254, bls12_381, hardware_threads

__all__ = ["bn254", "bls12_381", "hardware_threads", "apply_ifma"]


def apply_ifma(value: str) -> None:
    """[cpu] ifma ("auto" or "off", snarkd.config.cpu) for this process: the one switch of the AVX-512 IFMA
    kernels, reaching every extension that has them -- the core (_core.set_ifma: MSMs, NTTs) and native
    witnesses (_witness.set_ifma: its own copy of the switch; ~0.5 ms to load). Applied at entry points
    only: the CLI ($SNARKD_CPU_IFMA), `snarkd serve` and each cluster engine actor (their config's). Each
    switch waits for native calls already running, so none of them changes path midway."""
    from . import _witness

    on = value != "off"
    _core.set_ifma(on)
    _witness.set_ifma(on)
