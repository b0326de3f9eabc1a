"""Readers and writers for snarkjs/circom binary files (.zkey, .wtns, .r1cs)."""

from .binfile import BinFile
from .r1cs import R1cs, R1csHeader, SparseMatrix, read_r1cs, read_r1cs_header
from .wtns import Witness, check_witness, parse_wtns, read_wtns, write_wtns
from .zkey import ZKey, read_zkey, vk_json

__all__ = [
    "BinFile",
    "R1cs",
    "R1csHeader",
    "SparseMatrix",
    "read_r1cs",
    "read_r1cs_header",
    "Witness",
    "check_witness",
    "parse_wtns",
    "read_wtns",
    "write_wtns",
    "ZKey",
    "read_zkey",
    "vk_json",
]
