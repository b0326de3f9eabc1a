"""`snarkd prove` as the console script runs it, with round 36's head start on, off, or on without its H-section
prefault (bench-only switches: the product has none; the prefault was tried and not kept: cpu38-prefault.patch,
and `noprefault` is `on` without it): `python cpu38-entry.py on|off|noprefault prove ...`. Every
setting pays this file's few lines alike, so a pair compares the head start (or its prefault) alone (the device
stage's overlap, round 34's, on in all)."""
import sys

mode = sys.argv.pop(1)
if mode in ("off", "noprefault"):
    from snarkd.prover import cpu

    if mode == "off":
        cpu.head_start = lambda *args, **kwargs: None  # prover/oneshot imports it at its call: the stage starts them
    else:
        start = cpu.WitnessSums.__init__

        def without_prefault(self, *args, prefault=(), **kwargs):
            start(self, *args, **kwargs)

        cpu.WitnessSums.__init__ = without_prefault
from snarkd.cli import main

sys.exit(main())
