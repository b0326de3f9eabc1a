"""The MSM's host-side plan (window sizes, table memory): runs without a GPU."""
from snarkd.gpu import msm as gmsm
from snarkd.gpu.resident import choose_tables


def test_window_bits():
    assert [gmsm.window_bits(1 << k) for k in (0, 8, 16, 20, 24)] == [4, 4, 12, 16, 16]
    # tables share buckets across windows: larger windows from 2^22 points
    assert [gmsm.table_window_bits(1 << k) for k in (16, 20, 21, 22, 24)] == [12, 16, 16, 20, 20]
    # [gpus] msm_window_bits forces c
    assert gmsm.table_window_bits(1 << 24, 13) == 13 and gmsm.window_bits(1 << 20, 9) == 9


def test_table_bytes():
    # BN254 G1 2^24 at c = 20: 13 windows x 2^24 points x 64 bytes
    assert gmsm.WindowTable.bytes_for("bn254", False, 1 << 24) == 13 * (1 << 24) * 64
    # BLS12-381 G2 2^20 at c = 16: 16 windows x 2^20 x 192 bytes
    assert gmsm.WindowTable.bytes_for("bls12_381", True, 1 << 20) == 16 * (1 << 20) * 192


def test_scratch_bytes_cover_the_sort_and_two_rounds():
    # BN254 G1 2^20 at c = 16: 16 windows; the sort's 12 bytes per digit, 16 x 2^20 digits
    n, nw = 1 << 20, 16
    got = gmsm.scratch_bytes("bn254", False, n)
    assert got >= 12 * nw * n + 2 * gmsm.PLAN.target_items * 128
    # a window table shares one set of buckets: less bucket bookkeeping than per-window buckets
    assert gmsm.scratch_bytes("bn254", False, n, table=True) < got


def test_kept_sort_bytes():
    # the sorted entries of the larger window mode (plain c = 16: 16 windows) dominate
    n = 1 << 20
    assert 16 * 4 * n < gmsm.sort_bytes("bn254", n) < 17 * 4 * n + (1 << 24)


def test_auto_tables_fill_the_allowance_g2_first():
    n = 1 << 24
    sets = [("a", False, n), ("b1", False, n), ("c", False, n - 3), ("h", False, n), ("b2", True, n)]
    g1, g2 = (gmsm.WindowTable.bytes_for("bn254", x, n) for x in (False, True))  # 13 and 26 GiB
    assert choose_tables("bn254", sets, 10**15, "on") == ["a", "b1", "c", "h", "b2"]
    assert choose_tables("bn254", sets, 10**15, "off") == []
    assert choose_tables("bn254", sets, g2 + 2 * g1 + 1, "auto") == ["b2", "a", "b1"]
    assert choose_tables("bn254", sets, g1 + 1, "auto") == ["a"]  # G2 does not fit; one G1 table does
    # a table whose rows cannot be indexed in 31 bits is never chosen in auto
    assert choose_tables("bn254", [("a", False, 1 << 28)], 10**15, "auto") == []
