"""File-level aggregation: what `snarkd aggregate` and `snarkd verify-aggregate` do.

`aggregate_files` reads the key, the SRS and n (public, proof) JSON pairs, aggregates and writes the
aggregate JSON atomically; `verify_aggregate_files` returns (valid, reason). Anything that is not
a key, an SRS, a proof or an aggregate at all is an InputError naming the file; an aggregate that
reads well but does not verify (another key, SRS or statement; a tampered or non-canonical value)
is (False, why).

Nothing unverified leaves: `aggregate_files` batch-verifies the proofs first (verifier/batch.py: one refusal,
exit 3, naming every bad one) and verifies the aggregate it made, as read back from its JSON, before writing
it (`check_json`; the daemon's Aggregate does the same); one that does not verify is AggregateNotVerified
(exit 4, nothing written).
"""

from __future__ import annotations

import json
import sys
from snarkd.aggregate import proof_format, prover, verifier
from snarkd.aggregate.srs import DEV_WARNING, read_srs
from snarkd.aggregate.statement import read_proofs, read_vk
from snarkd.errors import EXIT_INTERNAL, InputError, SnarkdError


class AggregateNotVerified(SnarkdError):
    """An aggregate just made does not verify (its SRS changed while it was used, or a bug): never returned."""

    kind = "aggregate_not_verified"
    exit_code = EXIT_INTERNAL
    meaning = "an aggregate just made does not verify (nothing written or returned)"


def check_proofs(vk_json: dict, pairs, names, vk_name: str, threads: int = 0) -> None:
    """InputError naming the proofs that do not verify against the key (one batched check, bisected)."""
    from snarkd.verifier.batch import verify_batch

    res = verify_batch(vk_json, pairs, names=names, vk_name=vk_name, threads=threads)
    if res.bad:
        shown = ", ".join(names[i][1] for i in res.bad[:20]) + (", ..." if len(res.bad) > 20 else "")
        raise InputError(f"{len(res.bad)} of the {len(pairs)} proofs do not verify against {vk_name}, so nothing is "
                         f"aggregated: {shown}")


def check_json(srs, vk, obj: dict, name: str, srs_name: str = "", threads: int = 0) -> tuple[bool, str]:
    """(valid, why) of an aggregate JSON object against the key and the SRS (what verify-aggregate decides)."""
    agg_file = proof_format.read_json(obj, name)
    if agg_file.curve is not vk.curve:
        raise InputError(f"{name}: an aggregate of {agg_file.curve.name} proofs, but the key is of {vk.curve.name}")
    if any(len(row) != vk.n_public for row in agg_file.public):
        return False, f"{name}: public rows of {len(agg_file.public[0])} values, the key has {vk.n_public}"
    if agg_file.vk_digest != vk.digest.hex():
        return False, f"{name}: aggregates proofs of another verification key"
    if agg_file.srs_id != srs.id.hex():
        return False, f"{name}: made with another aggregation SRS"
    if agg_file.srs_dev != srs.dev:
        return False, f"{name}: says its SRS is {'' if agg_file.srs_dev else 'not '}a development one, but {srs_name} is {'' if srs.dev else 'not '}"
    try:
        agg = proof_format.from_bytes(vk.curve, agg_file.n, agg_file.proof)
    except proof_format.NotCanonical as exc:
        return False, f"{name}: {exc}"
    ok = verifier.verify(srs, vk, agg_file.public, agg, threads=threads)
    return ok, "" if ok else f"{name}: the aggregate does not verify"

def _load(path, what: str):
    from snarkd.formats import json_text

    return json_text.load(path, what)


def aggregate_files(vk_path, srs_path, out_path, pairs: list[tuple[str, str]], threads: int = 0, warn=None,
                    gpu=None) -> dict:
    """pairs: (public.json, proof.json) per proof, in order. Returns the aggregate JSON object written."""
    from snarkd.atomic import atomic_write_json

    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    n = len(pairs)
    if n < 2 or n & (n - 1):
        raise InputError(f"aggregate: {n} proofs given; SnarkPack aggregates a power of two, at least 2")
    vk_json = _load(vk_path, "verification key")
    vk = read_vk(vk_json, str(vk_path))
    srs = read_srs(srs_path, threads=threads)
    if srs.dev:
        warn(DEV_WARNING)
    if srs.curve is not vk.curve:
        raise InputError(f"{srs_path}: an SRS of {srs.curve.name}, but the key is of {vk.curve.name}")
    key = srs.specialize(n)
    loaded = [(_load(pub_path, "public signals"), _load(proof_path, "proof")) for pub_path, proof_path in pairs]
    names = [(str(pub), str(proof)) for pub, proof in pairs]
    check_proofs(vk_json, loaded, names, str(vk_path), threads)
    public, a, b, c = read_proofs(vk, ((pub, proof, *nm) for (pub, proof), nm in zip(loaded, names)))
    agg = prover.aggregate(key, vk, public, a, b, c, threads=threads, gpu=gpu)
    obj = proof_format.to_json(agg, srs.id, srs.dev, vk.digest, public)
    ok, why = check_json(srs, vk, json.loads(json.dumps(obj)), str(out_path), str(srs_path), threads)
    if not ok:
        changed = srs.changed()
        raise AggregateNotVerified(f"{out_path}: the aggregate made does not verify ({why}"
                                   + (f"; {srs_path} changed while it was used: {changed}" if changed else "")
                                   + "); nothing written")
    atomic_write_json(out_path, obj, indent=None)
    return obj


def verify_aggregate_files(vk_path, srs_path, agg_path, threads: int = 0, warn=None) -> tuple[bool, str]:
    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    vk = read_vk(_load(vk_path, "verification key"), str(vk_path))
    srs = read_srs(srs_path, check_all=False)
    if srs.dev:
        warn(DEV_WARNING)
    if srs.curve is not vk.curve:
        raise InputError(f"{srs_path}: an SRS of {srs.curve.name}, but the key is of {vk.curve.name}")
    return check_json(srs, vk, _load(agg_path, "aggregate"), str(agg_path), str(srs_path), threads)
