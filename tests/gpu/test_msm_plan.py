"""The MSM's host-side plan (window sizes, table memory): runs without a GPU."""
from snarkd.gpu import msm as gmsm


def test_window_bits(monkeypatch):
    monkeypatch.delenv("SNARKD_GPU_MSM_C", raising=False)
    assert [gmsm.window_bits(1 << k) for k in (0, 8, 16, 20, 24)] == [4, 4, 12, 16, 16]
    # tables share buckets across windows: larger windows from 2^22 points
    assert [gmsm.table_window_bits(1 << k) for k in (16, 20, 21, 22, 24)] == [12, 16, 16, 20, 20]
    monkeypatch.setenv("SNARKD_GPU_MSM_C", "13")
    assert gmsm.table_window_bits(1 << 24) == 13


def test_table_bytes(monkeypatch):
    monkeypatch.delenv("SNARKD_GPU_MSM_C", raising=False)
    # BN254 G1 2^24 at c = 20: 13 windows x 2^24 points x 64 bytes
    assert gmsm.WindowTable.bytes_for("bn254", False, 1 << 24) == 13 * (1 << 24) * 64
    # BLS12-381 G2 2^20 at c = 16: 16 windows x 2^20 x 192 bytes
    assert gmsm.WindowTable.bytes_for("bls12_381", True, 1 << 20) == 16 * (1 << 20) * 192
