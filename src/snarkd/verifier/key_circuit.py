"""Was this key made from this circuit? The zkey's coefficient section against the .r1cs.

snarkjs's `groth16 setup` copies the circuit's A and B matrices into the key's
§4, one entry (matrix, constraint, signal, coef·R² mod r) per term, in the
order of the .r1cs, then one entry (A, m + s, s, R² mod r) for each public
signal s = 0..nPublic (R = 2^256). Rebuilding that list from the .r1cs and
comparing it with §4 (as multisets: order is not part of the meaning) tells a key
for another circuit of the same size, or a damaged coefficient, from a witness
that does not satisfy the circuit. numpy and the native field core only.
"""

from __future__ import annotations

import numpy as np

from snarkd.formats.r1cs import R1cs
from snarkd.formats.zkey import ZKey


def _times_r2(coefs: np.ndarray, native) -> np.ndarray:
    """coef·R² mod r as plain limbs: to_mont twice (each multiplies by R)."""
    if coefs.shape[0] == 0:
        return np.zeros((0, 4), dtype=np.uint64)
    return native.fr_to_mont(native.fr_to_mont(np.ascontiguousarray(coefs)))


def expected_coefs(r1cs: R1cs, n_public: int, native) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(matrix, constraint, signal, value[n, 4]) of the §4 entries snarkjs writes for this circuit."""
    m = r1cs.header.n_constraints
    cols = []
    for k, mat in enumerate((r1cs.a, r1cs.b)):
        rows = np.repeat(np.arange(m, dtype=np.uint32), np.diff(mat.row_ptr).astype(np.int64))
        cols.append((np.full(mat.nnz, k, dtype=np.uint32), rows, mat.wires.astype(np.uint32), _times_r2(mat.coefs, native)))
    s = np.arange(n_public + 1, dtype=np.uint32)
    one = np.zeros((n_public + 1, 4), dtype=np.uint64)
    one[:, 0] = 1
    cols.append((np.zeros(n_public + 1, dtype=np.uint32), (m + s).astype(np.uint32), s, _times_r2(one, native)))
    return tuple(np.concatenate([c[i] for c in cols]) for i in range(4))


def _sorted(matrix, constraint, signal, value):
    order = np.lexsort((value[:, 0], value[:, 1], value[:, 2], value[:, 3], signal, constraint, matrix))
    return matrix[order], constraint[order], signal[order], value[order]


def first_coef_mismatch(zkey: ZKey, r1cs: R1cs) -> str | None:
    """None if §4 holds exactly the circuit's A and B entries; else what differs first."""
    from snarkd.native import _core

    native = getattr(_core, zkey.curve.native)
    want = expected_coefs(r1cs, zkey.n_public, native)
    ent = zkey.coef_entries
    got = (ent["matrix"].astype(np.uint32), ent["constraint"].astype(np.uint32), ent["signal"].astype(np.uint32),
           np.ascontiguousarray(ent["value"], dtype=np.uint64))
    if len(got[0]) != len(want[0]):
        return f"the key has {len(got[0])} coefficients, the circuit's A and B (and the public rows) make {len(want[0])}"
    g, w = _sorted(*got), _sorted(*want)
    diff = (g[0] != w[0]) | (g[1] != w[1]) | (g[2] != w[2]) | np.any(g[3] != w[3], axis=1)
    bad = np.flatnonzero(diff)
    if bad.size == 0:
        return None
    i = int(bad[0])
    where = f"(matrix {'AB'[int(w[0][i])]}, constraint {int(w[1][i])}, signal {int(w[2][i])})"
    if (g[0][i], g[1][i], g[2][i]) == (w[0][i], w[1][i], w[2][i]):
        return f"entry {where}: the key's coefficient is not the circuit's"
    got_at = f"(matrix {int(g[0][i])}, constraint {int(g[1][i])}, signal {int(g[2][i])})"
    return f"the circuit's entry {where} is not in the key (the key has {got_at} in its place)"
