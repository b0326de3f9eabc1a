"""Round 35: the witness module's SHA-256 (native/sha256.hpp), which file_trust uses instead of OpenSSL in a process
that has loaded the witness module (a one-shot `snarkd witness`: OpenSSL's load was ~2.1 ms of ~70). Held to
hashlib's digests byte for byte, in both of its forms (the SHA extensions and the portable rounds), at every length
around the block and padding boundaries, fed whole and in pieces; the tags it makes are hmac's."""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import sys

import pytest

from snarkd.formats import file_trust as T
from snarkd.native import _witness
from wfixtures import wasm_cache  # noqa: F401 - the compiled-module cache in a temp folder

FORMS = [True] + ([False] if _witness.sha_ni() else [])  # portable always; the SHA extensions where the CPU has them


@pytest.mark.parametrize("portable", FORMS)
def test_digests_equal_hashlibs_at_every_boundary(portable):
    data = os.urandom(4096 + 200)
    lengths = [*range(0, 300), *range(1000, 1100), 4095, 4096, 4097, len(data)]
    for n in lengths:
        want = hashlib.sha256(data[:n]).digest()
        assert _witness.Sha256(data[:n], portable=portable).digest() == want, n
        h = _witness.Sha256(portable=portable)  # in uneven pieces: the buffered path
        at, step = 0, 1
        while at < n:
            h.update(memoryview(data)[at:min(n, at + step)])
            at, step = at + step, step * 3 % 97 + 1
        assert h.digest() == want and h.hexdigest() == want.hex(), n


@pytest.mark.parametrize("portable", FORMS)
def test_large_input_copy_and_digest_keep_the_running_state(portable):
    big = os.urandom(3 << 20)  # above the size where the GIL is released
    h = _witness.Sha256(big[:1 << 20], portable=portable)
    c = h.copy()
    assert h.digest() == hashlib.sha256(big[:1 << 20]).digest()  # digest leaves it running
    h.update(big[1 << 20:])
    assert h.digest() == hashlib.sha256(big).digest()
    assert c.digest() == hashlib.sha256(big[:1 << 20]).digest()  # the copy is its own
    with pytest.raises(ValueError, match="data"):
        h.update("text")


@pytest.mark.skipif(not _witness.sha_ni(), reason="no SHA extensions: file_trust keeps OpenSSL")
def test_file_trust_uses_it_once_the_witness_module_is_loaded_and_tags_are_hmacs():
    assert T._native_sha256() is _witness.Sha256
    for key_len in (0, 32, 64, 65, 200):  # the HMAC's key padded, and hashed where longer than a block
        key, msg = os.urandom(key_len), os.urandom(777)
        mac = T._Hmac(key, msg[:100], _witness.Sha256)
        mac.update(msg[100:])
        assert mac.digest() == hmac.new(key, msg, hashlib.sha256).digest(), key_len
    data, context = os.urandom(100_000), b"wso\0{}"
    expected = hmac.new(T.secret(), b"snarkd-cache/v1\0" + hashlib.sha256(context).digest() + data,
                        hashlib.sha256).digest()
    assert T.tag(data, context) == expected
    assert T.tag_matches(data, expected, context) and not T.tag_matches(data, bytes(32), context)


@pytest.mark.skipif(not _witness.sha_ni(), reason="no SHA extensions: file_trust keeps OpenSSL")
def test_a_witness_process_never_loads_openssl(tmp_path):
    """The cached path of `snarkd witness` (the wasm's digest, the kept program's tag) runs without _hashlib, which
    is loaded only where the witness module is not (another command), the CPU lacks the extensions, or something
    else imports hashlib (the configuration's loader, read when a program is first kept)."""
    import json

    from test_native_control_flow import K_LIMBS, N_BITS, bigint_inputs
    from wfixtures import compiled

    c = compiled("bigint.circom", "bn128", N=N_BITS, K=K_LIMBS)
    wasm = tmp_path / "c.wasm"
    wasm.write_bytes(c.wasm.read_bytes())
    inputs = bigint_inputs(0)
    (tmp_path / "in.json").write_text(json.dumps(inputs))
    probe = ("import os, sys, snarkd.cli\n"
             "def said(code, _exit=os._exit):  # the command ends with os._exit: say it there\n"
             "    os.write(2, b'OPENSSL' if '_hashlib' in sys.modules else b'NO-OPENSSL')\n"
             "    _exit(code)\n"
             "os._exit = said\n"
             "sys.argv = ['snarkd'] + sys.argv[1:]\n"
             "snarkd.cli.main()\n"
             "said(0)\n")
    for run in range(2):  # the first run records and keeps a program; the second reads it back (tags checked)
        res = subprocess.run([sys.executable, "-c", probe, "witness", "--engine", "native", str(wasm),
                              str(tmp_path / "in.json"), str(tmp_path / "w.wtns")], capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr
        # (the first reads the configuration for the cache's place, and config/loader imports hashlib)
        assert run == 0 or "NO-OPENSSL" in res.stderr, res.stderr
        assert (tmp_path / "w.wtns").read_bytes() == c.snarkjs_witness(inputs).read_bytes()
