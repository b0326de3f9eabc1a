"""GPU kernels and their runtime (CuPy): NTT, H, sparse products, MSM G1/G2, keys resident.

    device.py    GpuDevice: one per GPU, owning its memory, modules, NTT domains, resident keys; the
                 prover's GPU work goes through its methods
    memory.py    the device-memory budget, pinned uploads
    module.py    kernels.cu per curve: the packaged build for the device (kernels/), else NVRTC; launch()
    busy.py      kernel-busy seconds from CUDA events
    msm.py       Pippenger on the device (digit sort, bucket accumulation, reduction), window tables
    ntt.py       NTT domains and the whole H computation
    pairing.py   Miller loops of many pairs and their products (aggregation)
    resident.py  a key's bases, CSR and window tables on one device

It knows arrays and curves, not Groth16: snarkd.prover.cuda drives it as a Backend.
Nothing here imports CuPy at import time, so the CPU-only install is unaffected.
"""
