"""A proving key's device-side arrays: bases, the CSR of its coefs section, MSM window tables.

Made once per (key, device) by GpuDevice.resident and shared by every worker on
that device. Window tables (2^(c w) P for every window w, snarkd.gpu.msm.WindowTable)
cost about 16x the bases' memory and make every MSM of the key cheaper; tables
mode "auto" builds them set by set (G2 first) while they take at most
TABLE_SHARE of the device budget left after the key, "on" builds all (failing
loudly), "off" none. A key whose bases do not fit is made with stream=True: its bases stay on the
host, page-locked once (hostbases.py), and each device stage streams them through in chunks for a
batch of proofs (stream.py); its CSR comes up when the stream plan keeps it there, else stays page-locked on the host and
crosses block by block (hostbases.HostCsr), or synthesis computes A·w, B·w on the CPU; no window
tables then.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from snarkd.gpu import hostbases
from snarkd.gpu.memory import GiB, GpuMemoryError
from snarkd.gpu.module import CURVES
from snarkd.gpu.msm import WindowTable, coord_words, scratch_bytes, sort_bytes

log = logging.getLogger("snarkd.gpu")
TABLE_MODES = ("auto", "on", "off")
TABLE_SHARE = 0.75  # auto: tables may take this share of the device budget left after the key; the rest is for proofs
BASE_SETS = ("a", "b1", "c", "h", "b2")  # the key's point sections (zkey order of the attributes)
SLACK = 64 << 20  # per proof: CuPy's rounding, small arrays, NTT scratch


def csr(zkey, matrix: int):
    """Row pointers, columns and values of matrix A (0) or B (1) of the coefs section
    (whose entries read_zkey has checked: matrix, constraint and signal in range)."""
    e = zkey.coef_entries
    sel = e[e["matrix"] == matrix]
    rows = sel["constraint"]
    # read_zkey checked these at load, but they are read again from the key's mapping here: a file rewritten
    # since then would give indices a kernel follows out of bounds (a sticky CUDA error, every tenant's jobs)
    if len(sel) and (int(rows.max()) >= zkey.domain_size or int(sel["signal"].max()) >= zkey.n_vars):
        raise ValueError(f"{zkey.path}: the key's coefficients changed since it was loaded (an index out of range)")
    order = np.argsort(rows, kind="stable")
    row_ptr = np.zeros(zkey.domain_size + 1, dtype=np.uint32)
    np.cumsum(np.bincount(rows, minlength=zkey.domain_size), out=row_ptr[1:])
    cols = np.ascontiguousarray(sel["signal"][order], dtype=np.uint32)
    vals = np.ascontiguousarray(sel["value"][order], dtype=np.uint64)
    return row_ptr, cols, vals


def csr_bytes(zkey) -> int:
    """Device bytes of both matrices' CSR (csr()): row pointers, then a column and a value per entry."""
    return 8 * (zkey.domain_size + 1) + 36 * len(zkey.coef_entries)


def base_bytes(zkey) -> int:
    """Device bytes of the key's bases (every point section)."""
    return sum(int(x.nbytes) for x in (zkey.a, zkey.b1, zkey.c, zkey.h, zkey.b2))


def proof_bytes(zkey, c: int = 0) -> int:
    """Device memory one proof of a key with resident bases needs beyond its resident arrays (an upper
    estimate): the witness, a, b, c (H written over c) on the domain, the largest MSM's scratch and the
    witness's kept digit sorts. (A streamed key's stage is sized by its StreamPlan instead.)"""
    curve = zkey.curve.native
    big = max(zkey.n_vars, zkey.domain_size)
    msm = max(scratch_bytes(curve, False, big, c), scratch_bytes(curve, True, zkey.n_vars, c))
    kept = 2 * sort_bytes(curve, zkey.n_vars, c)  # w's digit sorts, kept for its MSMs (table and plain)
    return 32 * zkey.n_vars + 3 * 32 * zkey.domain_size + msm + kept + SLACK


def choose_tables(curve: str, sets: list[tuple[str, bool, int]], allowance: int, mode: str, c: int = 0) -> list[str]:
    """Names of the (name, g2, points) sets that get window tables: all in mode "on";
    in "auto", G2 first, then the G1 sets in order, each while the total stays within
    allowance bytes and its table can be indexed (nw * n < 2^31)."""
    if mode == "off":
        return []
    if mode == "on":
        return [name for name, _, _ in sets]
    out, need = [], 0
    for name, g2, n in sorted(sets, key=lambda s: not s[1]):
        nbytes = WindowTable.bytes_for(curve, g2, n, c)
        if need + nbytes <= allowance and WindowTable.indexable(curve, n, c):
            out.append(name)
            need += nbytes
    return out


@dataclass(frozen=True)
class Residency:
    """What of a key is on a device (GpuDevice.residency): the engine's status shows it per key and device
    (engine/status.py KeyDevice, the proto's KeyDevice: tests/daemon/test_status_record.py keeps them equal)."""

    bytes: int  # bases (unless streamed), CSR and window tables
    tables: bool  # MSM window tables built
    streamed: bool  # the bases stay on the host; every MSM streams them through


class ResidentKey:
    """A proving key's device-side arrays (uint32 words, zkey layout)."""

    def __init__(self, dev, zkey, tables: str = "auto", msm_window_bits: int = 0, stream: bool = False,
                 csr_mode: str = "device"):
        if tables not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {tables!r} is not one of {', '.join(TABLE_MODES)}")
        self.curve = zkey.curve.native
        self.domain_size = int(zkey.domain_size)
        self.device_id = dev.index
        mem = dev.memory
        host = dict(zip(BASE_SETS, (zkey.a, zkey.b1, zkey.c, zkey.h, zkey.b2)))
        # stream: the bases stay on the host, page-locked (hostbases.HostBases), chunks go through in each stage
        self.host = hostbases.acquire(zkey, dev.cupy) if stream else None
        self._host_id = id(zkey) if stream else None
        with mem.guard("uploading the proving key"):
            up = mem.upload
            self.a, self.b1, self.c, self.h, self.b2 = (None if stream else up(host[name]) for name in BASE_SETS)
            self.csr = []
            for m in ((0, 1) if csr_mode == "device" else ()):
                rp, cols, vals = csr(zkey, m)
                self.csr.append((up(rp), up(cols), up(vals)))
        # "streamed": the CSR page-locked on the host, A·w and B·w block by block on the device; "host": the CPU's
        self.host_csr = hostbases.HostCsr([csr(zkey, m) for m in (0, 1)], dev.cupy) if csr_mode == "streamed" else None
        self.nbytes = sum(int(x.nbytes) for x in (self.a, self.b1, self.c, self.h, self.b2) if x is not None)
        self.nbytes += sum(int(x.nbytes) for t in self.csr for x in t)
        self.tables: dict[str, WindowTable] = {}
        if not stream:
            self._build_tables(dev, tables, msm_window_bits)

    @property
    def streamed(self) -> bool:
        return self.host is not None

    def close(self) -> None:
        """Unlock the host bases of a streamed key (the device arrays go with this object)."""
        if self._host_id is not None:
            hostbases.release(self._host_id)
            self._host_id = None
        if self.host_csr is not None:
            self.host_csr.close()
            self.host_csr = None

    def residency(self) -> Residency:
        return Residency(int(self.nbytes), bool(self.tables), self.streamed)

    def _sets(self):
        """(name, g2, device bases, point count) of each base set."""
        aw1 = 2 * coord_words(CURVES[self.curve], False)
        aw2 = 2 * coord_words(CURVES[self.curve], True)
        return [("a", False, self.a, self.a.size // aw1), ("b1", False, self.b1, self.b1.size // aw1),
                ("c", False, self.c, self.c.size // aw1), ("h", False, self.h, self.h.size // aw1),
                ("b2", True, self.b2, self.b2.size // aw2)]

    def _build_tables(self, dev, mode: str, c: int) -> None:
        """"on": every set's table (failing loudly); "auto": set by set, G2 first (its
        table saves the most per byte: ~4.5 ms of 20 at 2^20 for 2x a G1 table's
        bytes, which saves ~1.6 of 7.8), while they fit in TABLE_SHARE of the budget
        left after the key; the other sets keep plain bases."""
        if mode == "off":
            return
        mem = dev.memory
        sets = [s for s in self._sets() if s[3] > 0]
        room = mem.budget - mem.used
        allowance = room if mode == "on" else int(room * TABLE_SHARE)
        names = choose_tables(self.curve, [(name, g2, n) for name, g2, _, n in sets], allowance, mode, c)
        chosen = [s for s in sets if s[0] in names]
        need = sum(WindowTable.bytes_for(self.curve, g2, n, c) for _, g2, _, n in chosen)
        if mode == "auto" and len(chosen) < len(sets):
            log.info("device %d: MSM window tables for %s (%.2f GiB of %.2f GiB allowed); plain bases for %s",
                     self.device_id, ",".join(x[0] for x in chosen) or "none", need / GiB, allowance / GiB,
                     ",".join(x[0] for x in sets if x not in chosen))
        if not chosen:
            return
        mod = dev.module(self.curve)
        try:
            with mem.guard("building MSM window tables"):
                for name, g2, bases, n in chosen:
                    self.tables[name] = WindowTable(mod, self.curve, g2, bases, n, c)
                dev.synchronize()
        except (GpuMemoryError, ValueError) as e:  # ValueError: a table too large to index
            if mode == "on":
                raise
            log.warning("device %d: MSM window tables dropped: %s", self.device_id, e)
            self.tables.clear()
            mem.pool.free_all_blocks()
            return
        self.nbytes += sum(t.nbytes for t in self.tables.values())
