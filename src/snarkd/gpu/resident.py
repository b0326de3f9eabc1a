"""A proving key's device-side arrays: bases, the CSR of its coefs section, MSM window tables.

Made once per (key, device) by GpuDevice.resident and shared by every worker on
that device. Window tables (2^(c w) P for every window w, snarkd.gpu.msm.WindowTable)
cost about 16x the bases' memory and make every MSM of the key cheaper; tables
mode "auto" builds them when they take at most half the device budget left
after the key, "on" always (failing loudly), "off" never.
"""

from __future__ import annotations

import logging

import numpy as np

from snarkd.gpu.memory import GiB, GpuMemoryError
from snarkd.gpu.msm import CURVES, WindowTable, coord_words

log = logging.getLogger("snarkd.gpu")
TABLE_MODES = ("auto", "on", "off")


def csr(zkey, matrix: int):
    """Row pointers, columns and values of matrix A (0) or B (1) of the coefs section
    (whose entries read_zkey has checked: matrix, constraint and signal in range)."""
    e = zkey.coef_entries
    sel = e[e["matrix"] == matrix]
    rows = sel["constraint"]
    order = np.argsort(rows, kind="stable")
    row_ptr = np.zeros(zkey.domain_size + 1, dtype=np.uint32)
    np.cumsum(np.bincount(rows, minlength=zkey.domain_size), out=row_ptr[1:])
    cols = np.ascontiguousarray(sel["signal"][order], dtype=np.uint32)
    vals = np.ascontiguousarray(sel["value"][order], dtype=np.uint64)
    return row_ptr, cols, vals


class ResidentKey:
    """A proving key's device-side arrays (uint32 words, zkey layout)."""

    def __init__(self, dev, zkey, tables: str = "auto", msm_window_bits: int = 0):
        if tables not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {tables!r} is not one of {', '.join(TABLE_MODES)}")
        self.curve = zkey.curve.native
        self.device_id = dev.index
        mem = dev.memory
        with mem.guard("uploading the proving key"):
            up = mem.upload
            self.a, self.b1, self.c, self.h, self.b2 = (up(x) for x in (zkey.a, zkey.b1, zkey.c, zkey.h, zkey.b2))
            self.csr = []
            for m in (0, 1):
                rp, cols, vals = csr(zkey, m)
                self.csr.append((up(rp), up(cols), up(vals)))
        self.nbytes = sum(int(x.nbytes) for x in (self.a, self.b1, self.c, self.h, self.b2))
        self.nbytes += sum(int(x.nbytes) for t in self.csr for x in t)
        self.tables: dict[str, WindowTable] = {}
        self._build_tables(dev, tables, msm_window_bits)

    def _sets(self):
        """(name, g2, device bases, point count) of each base set."""
        aw1 = 2 * coord_words(CURVES[self.curve], False)
        aw2 = 2 * coord_words(CURVES[self.curve], True)
        return [("a", False, self.a, self.a.size // aw1), ("b1", False, self.b1, self.b1.size // aw1),
                ("c", False, self.c, self.c.size // aw1), ("h", False, self.h, self.h.size // aw1),
                ("b2", True, self.b2, self.b2.size // aw2)]

    def _build_tables(self, dev, mode: str, c: int) -> None:
        mem = dev.memory
        sets = [s for s in self._sets() if s[3] > 0]
        need = sum(WindowTable.bytes_for(self.curve, g2, n, c) for _, g2, _, n in sets)
        room = mem.budget - mem.used
        if mode == "off" or (mode == "auto" and need > room // 2):
            if mode == "auto":
                log.info("device %d: MSM window tables need %.2f GiB, more than half of the %.2f GiB left: not built",
                         self.device_id, need / GiB, room / GiB)
            return
        mod = dev.module(self.curve)
        try:
            with mem.guard("building MSM window tables"):
                for name, g2, bases, n in sets:
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
