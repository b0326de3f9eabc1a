#!/usr/bin/env python3
"""Mutation fuzz of `snarkd verify-aggregate`'s inputs: aggregates and SRS files.

    python bench/fuzz_aggregate.py [--count 10000] [--seed 1] [--out bench/results/aggregate-fuzz.json]

Half the cases mutate an aggregate of 2 BN254 proofs (bytes of the proof flipped; whole elements
swapped for other valid ones, so the full verifier runs; JSON fields changed, dropped, retyped;
the text cut), half mutate the SRS file (bytes flipped anywhere; header fields changed with the
header checksum fixed). A case passes when the verifier refuses it (InputError, or invalid) and
nothing else is raised; an aggregate is never accepted unless its mutation left it equal in
meaning (same bytes after parsing, or the SRS's verifier points unchanged). Prints and writes the
tally; exit 1 on any accepted or crashing case.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests" / "aggregate"))


def run(count: int, seed: int) -> dict:
    import agg_synthetic as synthetic
    from snarkd.aggregate import proof_format, prover, srs as S, verifier
    from snarkd.aggregate.files import verify_aggregate_files
    from snarkd.curves.params import BN254
    from snarkd.errors import InputError
    from snarkd.formats import checked_header

    rnd = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="aggfuzz"))
    srs = S.dev_srs(BN254, 2, a=3, b=5)
    st = synthetic.make(BN254, 2, n_public=1)
    agg = prover.aggregate(srs.specialize(2), st.vk, st.public, st.A, st.B, st.C)
    doc = proof_format.to_json(agg, srs.id, srs.dev, st.vk.digest, st.public)
    raw = agg.to_bytes()
    srs_path = tmp / "a.srs"
    S.write_srs(srs_path, srs)
    srs_bytes = srs_path.read_bytes()
    vk_json = tmp / "vk.json"
    vk_json.write_text(json.dumps(_vk_json(st.vk)))
    assert verify_aggregate_files(vk_json, srs_path, _write(tmp / "ok.json", doc), warn=lambda m: None)[0]
    t = 6 * BN254.n8q
    gt_slots = [i * t for i in range(5)] + [5 * t + 64 + j * t for j in range(10)]
    tally = {"cases": 0, "refused_input_error": 0, "refused_invalid": 0, "accepted_unchanged": 0, "accepted": 0, "crashed": 0}
    crashes = []
    for case in range(count):
        kind = rnd.random()
        srs_file, agg_doc, text = srs_path, doc, None
        if kind < 0.5:
            d = json.loads(json.dumps(doc))
            m = rnd.random()
            if m < 0.45:  # flip bits of the proof bytes
                blob = bytearray(raw)
                for _ in range(rnd.randrange(1, 4)):
                    blob[rnd.randrange(len(blob))] ^= 1 << rnd.randrange(8)
                d["proof"] = base64.b64encode(bytes(blob)).decode()
            elif m < 0.7:  # a GT value replaced by another valid one: the full verifier runs
                a, b = rnd.sample(gt_slots, 2)
                blob = bytearray(raw)
                blob[a : a + t], blob[b : b + t] = raw[b : b + t], raw[a : a + t]
                d["proof"] = base64.b64encode(bytes(blob)).decode()
            elif m < 0.9:  # a JSON field changed, dropped or retyped
                key = rnd.choice(sorted(d))
                choice = rnd.randrange(4)
                if choice == 0:
                    del d[key]
                elif choice == 1:
                    d[key] = rnd.choice([None, 0, 1, 4, -2, "", "x", [], {}, True, 2**70])
                elif choice == 2 and key == "public":
                    i, j = rnd.randrange(2), 0
                    d["public"][i][j] = rnd.choice([str(int(d["public"][i][j]) + 1), "0", str(BN254.r), "01", "-1", 5])
                elif key == "srs":
                    d["srs"] = {"id": "00" * 32, "dev": True} if rnd.random() < 0.5 else {"id": d["srs"]["id"], "dev": False}
                else:
                    d["n"] = rnd.choice([1, 3, 4, 8, 2**40])
            else:  # the text cut
                full = json.dumps(d)
                text = full[: rnd.randrange(len(full))]
            agg_doc = d
        else:
            data = bytearray(srs_bytes)
            if rnd.random() < 0.6:
                for _ in range(rnd.randrange(1, 3)):
                    data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
            else:
                hdr, off = checked_header.unpack(srs_bytes, S.MAGIC, S.VERSION, "x", ValueError)
                key = rnd.choice(sorted(hdr))
                hdr[key] = rnd.choice([None, 0, 2, 3, 4, True, False, "bn128", "bls12381", [], ["0" * 64] * 2, hdr[key]])
                data = bytearray(checked_header.pack(S.MAGIC, S.VERSION, json.dumps(hdr).encode()) + srs_bytes[off:])
            srs_file = tmp / "m.srs"
            srs_file.write_bytes(bytes(data))
        agg_file = tmp / "m.json"
        agg_file.write_text(text if text is not None else json.dumps(agg_doc))
        tally["cases"] += 1
        try:
            ok, _ = verify_aggregate_files(vk_json, srs_file, agg_file, warn=lambda m: None)
        except InputError:
            tally["refused_input_error"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - the fuzz counts every crash
            tally["crashed"] += 1
            crashes.append(f"case {case}: {exc!r}")
            continue
        if not ok:
            tally["refused_invalid"] += 1
            continue
        same = (text is None and agg_doc == doc) or _same_meaning(agg_doc, doc, raw)
        if same and (srs_file == srs_path or S.read_srs(srs_file).verifier_points() == srs.verifier_points()):
            tally["accepted_unchanged"] += 1
        else:
            tally["accepted"] += 1
            crashes.append(f"case {case}: ACCEPTED a mutated input")
    return {"tally": tally, "problems": crashes[:20]}


def _same_meaning(d, doc, raw) -> bool:
    try:
        return d["public"] == doc["public"] and base64.b64decode(d["proof"]) == raw and d["n"] == doc["n"] and d["vk"] == doc["vk"]
    except Exception:  # noqa: BLE001
        return False


def _write(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def _vk_json(vk) -> dict:
    from snarkd.curves.encoding import g1_bytes_to_json, g2_bytes_to_json

    return {"protocol": "groth16", "curve": vk.curve.name, "nPublic": vk.n_public,
            "vk_alpha_1": g1_bytes_to_json(vk.curve, vk.alpha), "vk_beta_2": g2_bytes_to_json(vk.curve, vk.beta),
            "vk_gamma_2": g2_bytes_to_json(vk.curve, vk.gamma), "vk_delta_2": g2_bytes_to_json(vk.curve, vk.delta),
            "IC": [g1_bytes_to_json(vk.curve, p) for p in vk.ic]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    t = time.time()
    res = run(args.count, args.seed)
    res["seconds"] = round(time.time() - t, 1)
    res["seed"] = args.seed
    print(json.dumps(res, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    return 0 if not res["tally"]["accepted"] and not res["tally"]["crashed"] else 1


if __name__ == "__main__":
    sys.exit(main())
