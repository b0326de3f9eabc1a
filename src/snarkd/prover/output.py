"""proof.json and public.json, byte for byte as snarkjs writes them."""

from __future__ import annotations

import os

from snarkd.atomic import atomic_write_bytes
from snarkd.errors import InputError
from snarkd.formats.json_text import dumps_indented  # json.dump(indent=1)'s text, without json's imports


def write_proof(result, proof_path: str | os.PathLike, public_path: str | os.PathLike) -> None:
    for path in (proof_path, public_path):
        parent = os.path.dirname(os.fspath(path)) or "."
        if not os.path.isdir(parent):
            raise InputError(f"{path}: output directory {parent} does not exist")
    atomic_write_bytes(proof_path, dumps_indented(result.proof).encode())
    atomic_write_bytes(public_path, dumps_indented(result.public).encode())
