"""The shell commands that README.md and docs/*.md show, found for tests/test_doc_commands.py.

`shell_commands(page)`: the commands of the page's fenced bash / sh / console blocks, one per simple command
(a line's `&&`-joined parts apart, backslash continuations joined, a console block's `$ ` lines only), each with
the comment the doc wrote after it. `synopses(page)`: the `snarkd ...` lines of its ```text blocks and its inline
code spans, written with placeholders (`KEY.zkey`, `[--max N]`, `a|b`), so only their subcommands and long flags
can be checked against the CLI: `cli_problem` parses a concrete command as `snarkd` would, `synopsis_problem` looks
its words up in the parser's tables.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]
SHELL_LANGS = {"bash", "sh", "shell", "console"}

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
INLINE_SNARKD = re.compile(r"`(snarkd [A-Za-z-][^`\n]*)`")
LONG_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


@dataclass(frozen=True)
class DocCommand:
    page: str  # "README.md", "docs/cli.md"
    line: int  # 1-based, where the command starts
    text: str  # the command as written, its comment and continuation backslashes left out
    comment: str = ""  # what the doc says after `#` on its line

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def program(self) -> str:
        return self.text.split()[0]


def _outside_quotes(code: str):
    """(index, char) of code's characters that are not inside '...' or "..." (a backslash escapes in "...")."""
    quote, escaped = None, False
    for i, ch in enumerate(code):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        else:
            yield i, ch


def split_comment(line: str) -> tuple[str, str]:
    """(code, comment): a `#` starts a comment at the line's start or after a blank, outside quotes."""
    for i, ch in _outside_quotes(line):
        if ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def split_and(code: str) -> list[str]:
    """The simple commands of an `a && b && c` line (`&&` outside quotes)."""
    parts, start, prev = [], 0, -2
    for i, ch in _outside_quotes(code):
        if ch == "&" and prev == i - 1 and code[i - 1] == "&":
            parts.append(code[start:i - 1])
            start = i + 1
        prev = i
    parts.append(code[start:])
    return [" ".join(p.split()) for p in parts if p.strip()]


def _blocks(text: str):
    """(language, first line number of the body, body) of each fenced block."""
    for m in FENCE.finditer(text):
        yield m.group(1).lower(), text.count("\n", 0, m.start(2)) + 1, m.group(2)


def commands_of_block(page: str, lang: str, first_line: int, body: str) -> list[DocCommand]:
    out, pending, start = [], "", 0
    for n, raw in enumerate(body.splitlines(), first_line):
        if lang == "console":
            if not raw.startswith("$ ") and not pending:
                continue  # output shown under a prompt
            raw = raw[2:] if raw.startswith("$ ") else raw
        if not pending:
            start = n
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        code, comment = split_comment(pending + raw)
        pending = ""
        out += [DocCommand(page, start, part, comment) for part in split_and(code)]
    return out


def shell_commands(page: str) -> list[DocCommand]:
    text = (REPO / page).read_text()
    return [c for lang, line, body in _blocks(text) if lang in SHELL_LANGS
            for c in commands_of_block(page, lang, line, body)]


def synopses(page: str) -> list[DocCommand]:
    """`snarkd ...` lines of ```text blocks and inline code spans (outside fences)."""
    text = (REPO / page).read_text()
    out = []
    for lang, line, body in _blocks(text):
        if lang == "text":
            out += [DocCommand(page, n, split_comment(raw)[0].strip()) for n, raw in enumerate(body.splitlines(), line)
                    if raw.startswith("snarkd ")]
    outside = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # line numbers kept
    for m in INLINE_SNARKD.finditer(outside):
        out.append(DocCommand(page, outside.count("\n", 0, m.start()) + 1, m.group(1).strip()))
    return out


# -- the CLI's own parser --------------------------------------------------------------------------

def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings if s.startswith("--")}


def cli_problem(argv: list[str]) -> str | None:
    """None when `snarkd`'s parser accepts argv (without running anything) and each long flag is one of its options
    as spelled (argparse would take `--timing` for `--timings`, so a renamed flag would pass unseen), else what not."""
    from snarkd.cli import build_parser

    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = parser.parse_args(argv)
    except SystemExit as exc:
        return None if exc.code == 0 else err.getvalue().strip().splitlines()[-1]
    if not getattr(args, "func", None):
        return "no command to run (a subcommand is missing)"
    return synopsis_problem(" ".join(["snarkd", *argv]))


def synopsis_problem(text: str) -> str | None:
    """A synopsis's subcommands (`a|b` alternatives each) and long flags must exist in the parser: None, or what does
    not. A placeholder in a subcommand's place (`snarkd COMMAND --help`) checks only the top level's flags."""
    from snarkd.cli import build_parser

    words = text.split()[1:]
    parsers = [build_parser()]
    for i, word in enumerate(words):
        if word.startswith("-") or word.isupper() or not re.fullmatch(r"[a-z][a-z0-9|-]*", word):
            if i == 0 and not word.startswith("-"):
                return None if word.isupper() else f"{word!r} is not a snarkd command"
            break
        names, subs = word.split("|"), [_subcommands(p) for p in parsers]
        found = [s[name] for name in names for s in subs if name in s]
        if len(found) < len(names):
            if i == 0 or any(subs):  # where the parser wants a subcommand, a word not among them is an error
                return f"{word!r}: no such snarkd command"
            break  # a positional argument
        parsers = found
    known = set().union(*(_long_options(p) for p in parsers))
    unknown = [f for f in LONG_FLAG.findall(text) if f not in known]
    return f"unknown option(s) {', '.join(unknown)}" if unknown else None
