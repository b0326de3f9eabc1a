"""proof.json and public.json, byte for byte as snarkjs writes them."""

from __future__ import annotations

import os

from snarkd.atomic import atomic_write_json
from snarkd.errors import InputError


def write_proof(result, proof_path: str | os.PathLike, public_path: str | os.PathLike) -> None:
    for path in (proof_path, public_path):
        parent = os.path.dirname(os.fspath(path)) or "."
        if not os.path.isdir(parent):
            raise InputError(f"{path}: output directory {parent} does not exist")
    atomic_write_json(proof_path, result.proof)
    atomic_write_json(public_path, result.public)
