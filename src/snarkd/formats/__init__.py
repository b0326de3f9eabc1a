"""Readers and writers for snarkjs/circom binary files (.zkey, .wtns, .r1cs).

Names are resolved on first use (PEP 562): importing one reader (e.g. the
numpy-free zkey_layout of the one-shot prover) does not import the others.
"""


_EXPORTS = {
    "BinFile": "binfile",
    "R1cs": "r1cs",
    "R1csHeader": "r1cs",
    "SparseMatrix": "r1cs",
    "read_r1cs": "r1cs",
    "read_r1cs_header": "r1cs",
    "Witness": "wtns",
    "check_witness": "wtns",
    "parse_wtns": "wtns",
    "read_wtns": "wtns",
    "write_wtns": "wtns",
    "ZKey": "zkey",
    "read_zkey": "zkey",
    "vk_json": "zkey",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__ with a fromlist gives the submodule; importlib itself (and warnings) would cost every command
    return getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
