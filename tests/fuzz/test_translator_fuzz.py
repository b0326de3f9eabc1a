"""The short translator fuzz (translator_fuzz.py; the long run: bench/witness_translator_fuzz.py, 10,000 mutants):
mutated circom modules through the compiled witness program's translator end in a refusal or a translation, never
another exception; in the slow tier, translations built with AddressSanitizer + UndefinedBehaviorSanitizer run on
the seed's inputs without a sanitizer report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from snarkd.witness import compiled  # noqa: E402

import translator_fuzz  # noqa: E402


def test_translator_refuses_or_translates_every_mutant(tmp_path):
    report = translator_fuzz.fuzz(150, 11, workdir=tmp_path)
    assert report["findings"] == [], report["findings"][:3]
    c = report["counts"]
    assert c["translated"] + c["refused"] == 150 and c["translated"] > 0 and c["refused"] > 0, c


@pytest.mark.slow
@pytest.mark.skipif(compiled.compiler() is None, reason="no C++ compiler")
def test_sanitized_translations_run_clean(tmp_path):
    report = translator_fuzz.fuzz(120, 12, sanitize=2, workdir=tmp_path)
    assert report["findings"] == []
    runs = report["sanitized"]
    assert len(runs) >= 4 and all(r["outcome"] == "ok" for r in runs), [(r["i"], r["outcome"], r.get("detail", "")[
        :500]) for r in runs if r["outcome"] != "ok"]
    seeds = [r for r in runs if r["i"] < 0]  # the seeds as circom wrote them: a witness for every input
    assert len(seeds) == 3 and all(set(r["statuses"]) == {"0"} for r in seeds), seeds
