"""`snarkd export-vk KEY.zkey VK.json`: snarkjs's verification_key.json."""

from __future__ import annotations

from snarkd.cli.parsing import add_epilog

ORDER = 25


def register(sub) -> None:
    p = add_epilog(sub.add_parser("export-vk", help="write snarkjs's verification_key.json for a .zkey"))
    p.add_argument("zkey")
    p.add_argument("vk")
    p.set_defaults(func=run)


def run(args) -> int:
    from snarkd.atomic import atomic_write_json
    from snarkd.formats.zkey import read_zkey, vk_json

    zkey = read_zkey(args.zkey)
    try:
        vk = vk_json(zkey)
    finally:
        zkey.close()
    atomic_write_json(args.vk, vk)
    return 0
