"""Native CPU core: Montgomery fields, G1/G2, Pippenger MSM, NTT, Groth16 pieces.

The core (_core) loads on first use, not with the package: `snarkd witness` needs only _witness, and loading the
core's 4 MB of code cost that command ~4 ms of its ~70 ms whole-process CPU (bench/witness_vs_circom_cpp.py)."""

__all__ = ["apply_huge_pages", "apply_ifma"]  # the extensions are its submodules: `from snarkd.native import _core`, `_witness`, ...


def apply_ifma(value: str) -> None:
    """[cpu] ifma ("auto" or "off", snarkd.config.cpu) for this process: the one switch of the AVX-512 IFMA
    kernels, reaching every extension that has them -- the core (_core.set_ifma: MSMs, NTTs) and native
    witnesses (_witness.set_ifma: its own copy of the switch; ~0.5 ms to load). Applied at entry points
    only: the CLI ($SNARKD_CPU_IFMA), `snarkd serve` and each cluster engine actor (their config's). Each
    switch waits for native calls already running, so none of them changes path midway."""
    from . import _core, _witness

    on = value != "off"
    _core.set_ifma(on)
    _witness.set_ifma(on)


def apply_huge_pages(value: str) -> None:
    """[cpu] huge_pages ("auto" or "off", snarkd.config.cpu) for this process: whether large native buffers
    (native/big_buffer.hpp) are advised MADV_HUGEPAGE, in the core (_core.set_huge_pages) and in native
    witnesses' compiled libraries (_witness.set_huge_pages: their linear memory), so one setting governs both.
    Applied where apply_ifma is. Advice only: buffers mapped already keep theirs, the next ones take the new."""
    from . import _core, _witness

    on = value != "off"
    _core.set_huge_pages(on)
    _witness.set_huge_pages(on)
