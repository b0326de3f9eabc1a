"""`snarkd prove` as the console script runs it, with round 36's head start on or off (a bench-only switch:
the product has none): `python cpu38-entry.py on|off prove ...`. Both settings pay this file's few lines alike,
so the pair compares the head start alone (the device stage's overlap, round 34's, on in both)."""
import sys

if sys.argv.pop(1) == "off":
    from snarkd.prover import cpu

    cpu.head_start = lambda *args, **kwargs: None  # cli/prove imports it at its call: the stage starts them
from snarkd.cli import main

sys.exit(main())
