"""SnarkPack aggregation of Groth16 proofs of one key (Gailly-Maller-Nitulescu, eprint 2021/529).

One protocol step per module: `srs` (the aggregation SRS, its file and commitment keys), `commitment`
(pair and single commitments), `transcript` (Fiat-Shamir), `gipa` (the TIPP + MIPP rounds), `kzg`
(openings of the final commitment keys), `prover`, `verifier`, `proof_format` (the aggregate's bytes
and JSON); `statement` (key, public rows and proof points from snarkjs JSON), `group` (the curve's
native kernels, snarkd.native._aggregate) and `files` (what the CLI commands do).
"""
