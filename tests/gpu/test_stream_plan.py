"""How a streamed key's device stage is sized (gpu/stream.py plan): runs without a GPU."""
import pytest

from snarkd.gpu import stream as gstream
from snarkd.gpu.ntt import h_bytes

GiB = 1 << 30


def chain(curve, power, csr_per_row=80):
    n = 1 << power
    return gstream.KeyShape(curve, n, n, csr_per_row * n)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("power,budget", [(20, 1), (24, 12), (24, 16), (26, 12), (26, 16), (26, 24)])
def test_every_plan_fits_its_budget(curve, power, budget):
    shape = chain(curve, power)
    p = gstream.plan(shape, budget * GiB)
    assert p is not None
    assert p.peak <= budget * GiB and p.batch >= 1
    # the peak is the sum of its terms, recomputed from the same options
    t = gstream.peak_bytes(shape, p.chunk, p.batch, p.csr, p.h_mode, p.keep_w, p.merged)
    assert t["peak"] == p.peak and t["held"] == p.held
    # one more proof would not fit (or the batch is at its cap)
    if p.batch < gstream.BATCH_MAX:
        assert gstream.peak_bytes(shape, p.chunk, p.batch + 1, p.csr, p.h_mode, p.keep_w, p.merged)["peak"] > budget * GiB


def test_the_2p26_key_fits_12_gib_with_the_csr_off_the_device():
    shape = chain("bn254", 26)
    p = gstream.plan(shape, 12 * GiB)
    assert p.csr == "streamed" and p.h_mode == "in-place" and p.peak <= 12 * GiB
    # the CPU's A·w, B·w (3 s at 2^26) cost more than sending the CSR (5 GiB) up
    host = gstream._cost_s(shape, p.chunk, "host", p.h_mode, p.keep_w)
    assert host > gstream._cost_s(shape, p.chunk, "streamed", p.h_mode, p.keep_w) + 2.0
    # and a plan held to the CPU's products still fits
    assert gstream.plan(shape, 12 * GiB, csr_modes=("host",)).csr == "host"
    # one stage table of n elements (the inverse and the coset shift derived from it): 2 GiB, not 6
    assert 2 * GiB <= shape.tables_bytes() < 2 * GiB + (1 << 20)
    assert h_bytes("in-place", 1 << 26) == 6 * GiB and h_bytes("parked", 1 << 26) < 4.2 * GiB
    # at 2^27 two vectors (8 GiB) beside the 4 GiB table: H parked at 16 GiB
    p27 = gstream.plan(chain("bn254", 27), 16 * GiB)
    assert p27.h_mode == "parked" and p27.peak <= 16 * GiB


def test_a_larger_budget_batches_more_and_a_forced_chunk_is_kept():
    shape = chain("bn254", 24)
    assert gstream.plan(shape, 24 * GiB).batch > gstream.plan(shape, 12 * GiB).batch > 1
    assert gstream.plan(shape, 12 * GiB, chunk=1 << 20).chunk == 1 << 20
    assert gstream.plan(shape, 12 * GiB, batch_max=1).batch == 1


def test_too_small_a_budget_gives_no_plan_and_largest_power_says_why():
    assert gstream.plan(chain("bn254", 26), 4 * GiB) is None
    best = gstream.largest_power("bn254", 12 * GiB)
    assert best["power"] == 26 and "2^27 needs at least" in best["next"]
    for curve in ("bn254", "bls12_381"):  # a 16 GiB card: 2^27 (the line), and why not 2^28
        best = gstream.largest_power(curve, 16 * GiB)
        assert best["power"] == 27 and "2^28 needs at least" in best["next"]
    assert gstream.largest_power("bn254", 24 * GiB)["power"] == 27
    # the next power's need is what plan() refuses: past the budget
    assert gstream.plan(chain("bn254", 27, 0), 12 * GiB) is None


def test_ranges_and_tasks_cover_every_row_once():
    p = gstream.StreamPlan(300, 1, "device", "in-place", True, 0, 0)
    m, npub = 1000, 3
    ranges = p.ranges(m)
    assert ranges[0] == (0, 300) and ranges[-1] == (900, 1000)
    rows = {"a": 0, "b1": 0, "c": 0, "b2": 0}
    for lo, hi in ranges:
        for t in gstream.w_tasks(lo, hi, npub, True):
            rows[t.name] += t.r1 - t.r0
            if t.name == "c":
                # C's rows start at n_public + 1: the first chunk skips those scalars, later ones none
                assert t.offset == (npub + 1 if lo == 0 else 0) and t.r0 == max(lo, npub + 1) - npub - 1
    assert rows == {"a": m, "b1": m, "c": m - npub - 1, "b2": m}
    assert [t.name for t in gstream.w_tasks(0, 4, npub, False)] == ["a", "b1"]  # all public: no C rows here


def test_each_stage_gets_the_plan_for_its_size_within_the_keys():
    # the key's plan sets how many proofs a stage takes; a lone proof then runs H and W as one pass (the W
    # part's first chunks cross while H is summed), a stage of many the batch that shares each chunk
    shape = chain("bn254", 24)
    key = gstream.plan(shape, 12 * GiB)
    lone = gstream.plan(shape, key.peak, 0, key.batch, key.chunk, (key.csr,), expect=1)
    many = gstream.plan(shape, key.peak, 0, key.batch, key.chunk, (key.csr,), expect=key.batch)
    assert lone.merged and lone.keep_w and not many.merged and many.batch == key.batch >= 4
    for p in (lone, many):
        assert p.peak <= key.peak and p.held == key.held and p.csr == key.csr
    assert gstream._fill_s(shape, key.chunk, True) < gstream._fill_s(shape, key.chunk, False) / 4
    # the H pass's slots hold H rows only (G1 points): at 2^26 the 2^23 chunk (half the reductions of 2^22) fits 12 GiB
    p26 = gstream.plan(chain("bn254", 26), 12 * GiB)
    assert p26.chunk == 1 << 23 and p26.peak <= 12 * GiB
    t = gstream.peak_bytes(chain("bn254", 26), 1 << 23, 1, p26.csr, p26.h_mode, True)
    assert t["h_pass"] < t["w_pass"]
    # a stage larger than any plan takes gets none (the backend then keeps the key's plan)
    assert gstream.plan(chain("bn254", 26), p26.peak, 0, 4, p26.chunk, (p26.csr,), expect=4) is None


def test_the_full_tables_only_where_the_budget_has_room():
    from snarkd.gpu import ntt as gntt

    # a shift table of n elements (one multiply per element, not two) and an inverse stage table cost 64 n bytes
    # more: a resident key's domain on a large card takes them, a streamed key's (12 GiB) keeps the one stage table
    # and the two ~sqrt(n) shift tables its plan counts on
    assert gntt.domain_bytes(26, True) - gntt.domain_bytes(26) >= 4 * GiB - (1 << 20)
    assert gntt.full_tables_fit(26, 132 * GiB) and gntt.full_tables_fit(24, 40 * GiB)
    assert not gntt.full_tables_fit(24, 12 * GiB) and not gntt.full_tables_fit(26, 24 * GiB)
    assert gntt.shift_split(20, True) == 20 and gntt.shift_split(20) == 10
