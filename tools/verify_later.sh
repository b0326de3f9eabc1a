#!/usr/bin/env bash
# snarkjs groth16 verify on every proof a GPU machine kept for later (tests/gpu/gpu_helpers.snarkjs_verify with
# SNARKD_VERIFY_LATER set there): DIR/NNN/{vk,public,proof}.json. Exits 1 when any proof is refused.
#   bash tools/verify_later.sh DIR
set -uo pipefail
cd "$(dirname "$0")/.."
bad=0; n=0
for d in "$1"/*/; do
  n=$((n + 1))
  if node node_modules/.bin/snarkjs groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json" | grep -q "OK"; then :;
  else echo "REFUSED: $d"; bad=$((bad + 1)); fi
done
echo "snarkjs groth16 verify: $((n - bad)) of $n proofs OK"
[ "$bad" = 0 ]
