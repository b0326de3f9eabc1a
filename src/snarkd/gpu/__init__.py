"""CUDA backend (CuPy + NVRTC): NTT, H, spmv and MSM G1/G2 on the device, keys resident.

Entry points: snarkd.prover.backend.get_backend("cuda"), snarkd.gpu.backend.CudaBackend.
Nothing here imports CuPy at import time, so the CPU-only install is unaffected.
"""
