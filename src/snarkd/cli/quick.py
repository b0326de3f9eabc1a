"""A command's usual arguments read without argparse (its import and parser building are ~5-7 ms of a one-shot
`snarkd prove` or `snarkd witness`): whole option names, each at most once, flags and options with one value. What
this does not read (help, an abbreviation, `--opt=value`, `--`, an unknown option, a refused value) is None, and
argparse then parses the arguments with its own messages and exit codes; each command's tests hold the result to
argparse's Namespace."""

from __future__ import annotations


DIGITS = "digits"  # an option's value: ASCII digits, read as an int (int()'s other forms are argparse's to read)
TEXT = "text"  # any value not starting with "-" (argparse's own reading of one that does differs)


def _value(kind, text: str):
    if kind == DIGITS:
        return int(text) if text.isascii() and text.isdigit() else None
    if kind == TEXT:
        return None if text.startswith("-") else text
    return text if text in kind else None  # a tuple of choices


def read_options(argv: list[str], got: dict, flags: dict, valued: dict) -> list[list[str]] | None:
    """Fill `got` from argv's options (flags: option -> (name, value); valued: option -> (name, DIGITS, TEXT or a
    tuple of choices)); the positional arguments as runs, split where an option comes between them; None when
    argparse must read argv."""
    runs: list[list[str]] = []
    seen: set[str] = set()
    after_option = True
    args = iter(argv)
    for a in args:
        if not a.startswith("-"):
            if after_option:
                runs.append([])
            runs[-1].append(a)
            after_option = False
            continue
        after_option = True
        if a in seen:
            return None
        seen.add(a)
        if a in flags:
            name, value = flags[a]
            got[name] = value
        elif a in valued:
            name, kind = valued[a]
            text = next(args, None)
            value = None if text is None else _value(kind, text)
            if value is None:
                return None
            got[name] = value
        else:
            return None
    return runs
