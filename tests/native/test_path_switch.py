"""The native core's path switches (_core.set_ifma, _set_adx, _set_glv; native/path_gate.hpp) flipped from
another thread while MSMs run: a switch waits for the running calls and changes between them, so every MSM
gives the result of the naive sum (native scalar multiplications, checked against py_ecc in test_points)
whichever paths it ran on; and the switches come back as they were."""
import threading

import numpy as np

from snarkd.native import _core
from helpers import enc_many
from test_msm import _bases, _naive_grouped, _ops, rng


def _case(curve, g2, n):
    msm, mul, add, e, width = _ops(curve, g2)
    bases = _bases(curve, g2, n, n_distinct=40)  # n >= 2048: the batch-affine buckets on either path
    sc = [rng.randrange(curve.r) for _ in range(n)]
    return msm, bases, enc_many(sc, 4), _naive_grouped(curve, mul, add, bases, sc, width)


def test_switches_flipped_while_msms_run(curve):
    cases = [_case(curve, False, 3000), _case(curve, True, 600)]
    before = (_core.uses_simd52(), _core.uses_adx())
    stop = threading.Event()
    flips, results, errors = [], [], []

    def flipper():
        i = 0
        while not stop.is_set():
            i += 1
            prev = (_core.set_ifma(i % 2 == 0), _core._set_adx(i % 3 != 0), _core._set_glv(i % 3))
            flips.append(prev)

    def prover(k):
        try:
            for rnd in range(6):
                msm, bases, sc, want = cases[(k + rnd) % len(cases)]
                results.append((np.array_equal(msm(bases, sc, threads=2), want), k, rnd))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    f = threading.Thread(target=flipper)
    workers = [threading.Thread(target=prover, args=(k,)) for k in range(2)]
    f.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    f.join()
    _core.set_ifma(before[0] or _core.cpu_has_simd52())
    _core._set_adx(before[1] or _core.cpu_has_adx())
    _core._set_glv(1)

    assert errors == []
    assert len(results) == 12 and all(ok for ok, _, _ in results), [r for r in results if not r[0]]
    assert len(flips) >= 2  # the switches did change between the MSMs
    if _core.cpu_has_simd52():
        assert {p[0] for p in flips} == {True, False}
    assert (_core.uses_simd52(), _core.uses_adx()) == (_core.cpu_has_simd52(), _core.cpu_has_adx())


def test_switch_arguments_checked_before_waiting():
    import pytest

    with pytest.raises(ValueError, match="mode"):
        _core._set_glv(3)
    with pytest.raises(ValueError, match="window"):
        _core._set_msm_window(1)
    assert _core._set_glv(1) == 1 and _core._set_msm_window(0) == 0
