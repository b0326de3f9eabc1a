"""The architecture, checked: the layer contracts in pyproject.toml hold, no module imports itself back
through others (counting imports inside functions too), and ARCHITECTURE.md's module index names exactly
the modules there are."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]


def test_import_linter_contracts():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    res = subprocess.run([exe, "--config", str(REPO / "pyproject.toml")], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def _cycles(graph, modules) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & modules)))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt) & modules))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles():
    sys.path.insert(0, str(REPO / "src"))
    graph = grimp.build_graph("snarkd", cache_dir=None)
    # a package's __init__ re-exporting its modules is not a cycle of the design: leave the packages out
    modules = {m for m in graph.modules if not graph.find_children(m)}
    assert _cycles(graph, modules) == []


def test_the_module_index_names_every_module():
    text = (REPO / "ARCHITECTURE.md").read_text()
    index = text[text.index("## Module index"):]
    block = index[index.index("```text") + 7: index.index("```", index.index("```text") + 7)]
    named = [m.group(1) for m in re.finditer(r"^(\S+\.py)\s+\S", block, re.M)]
    root = REPO / "src" / "snarkd"
    there = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                   if p.name not in ("__init__.py", "__main__.py") and "proto" not in p.relative_to(root).parts)
    assert sorted(set(named) - set(there)) == [], "named in ARCHITECTURE.md's module index, but not in the tree"
    assert sorted(set(there) - set(named)) == [], "modules missing from ARCHITECTURE.md's module index"
    assert len(named) == len(set(named)), "a module named twice"


def test_the_daemon_asks_its_engine_only_what_the_contract_declares():
    """daemon/ reaches an engine only through snarkd.engine.contract.ProvingEngine's members (so Engine and
    ClusterEngine, which both pass tests/engine/test_contract.py, serve it alike)."""
    sys.path.insert(0, str(REPO / "src"))
    from snarkd.engine.contract import ProvingEngine

    members = {n for n in dir(ProvingEngine) if not n.startswith("_")} | set(ProvingEngine.__annotations__)
    used = set()
    for path in (REPO / "src" / "snarkd" / "daemon").glob("*.py"):
        used |= set(re.findall(r"\b(?:self|service|outer)\.engine\.(\w+)", path.read_text()))
        used |= set(re.findall(r"\bengine\.(\w+)\(", path.read_text())) - {"contract", "paths"}
    assert used and used - members == set()
