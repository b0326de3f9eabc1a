"""SnarkPack aggregation of Groth16 proofs of one key (Gailly-Maller-Nitulescu, eprint 2021/529).

One protocol step per module: `group` (the curve's native kernels and encodings), `srs` (the
aggregation SRS file and its commitment keys), `commitment` (pair/single commitments),
`transcript` (Fiat-Shamir), `gipa` (the TIPP + MIPP rounds), `kzg` (openings of the final
commitment keys), `prover`, `verifier`, `proof_format` (the aggregate's bytes and JSON).
"""
