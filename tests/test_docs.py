"""The documentation: the site builds with `mkdocs build --strict` (mkdocs.yml, docs/: broken links between
pages and missing anchors fail it), and every relative link in README.md, docs/ and bench/results/README.md
points to a file that exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "results" / "README.md"]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(text: str) -> list[str]:
    """Targets of the Markdown links in text outside code, without URLs (scheme:) and in-page anchors."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


def test_the_link_pattern():
    text = "[a](docs/a.md) ![i](x/i.png \"t\") [u](https://e.org/x) [s](#here) `[c](no.md)`\n```\n[f](no.md)\n```\n"
    assert relative_links(text) == ["docs/a.md", "x/i.png"]


def test_every_relative_link_points_to_a_file():
    missing = []
    for page in PAGES:
        assert page.is_file(), page
        for target in relative_links(page.read_text()):
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                missing.append(f"{page.relative_to(REPO)}: {target}")
    assert not missing, "links to files that do not exist:\n" + "\n".join(missing)


def test_readme_links_every_docs_page():
    readme = relative_links((REPO / "README.md").read_text())
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")} - {"docs/index.md"}
    assert pages <= set(readme), f"README.md does not link: {sorted(pages - set(readme))}"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]' (or '.[test]')")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
                          "--site-dir", str(tmp_path / "site")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "performance" / "index.html").is_file()
