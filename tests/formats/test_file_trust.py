"""formats/file_trust.py: given files open as regular files only, at once; snarkd's own caches are used only
when unlinked, this user's, in a directory only it can write, bounded and under its HMAC tag (issue 33)."""

from __future__ import annotations

import os
import time

import pytest

from snarkd.errors import InputError
from snarkd.formats import file_trust as T


@pytest.fixture(autouse=True)
def own_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    yield
    T._secret.clear()


def cache_dir(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    return d


def test_a_sealed_file_reads_back_and_any_change_is_refused(tmp_path):
    d = cache_dir(tmp_path)
    p = d / "x.bin"
    p.write_bytes(T.seal(b"payload", b"ctx"))
    assert bytes(T.read_cache(p, b"ctx", 100)) == b"payload"
    with pytest.raises(T.UntrustedCache, match="tag does not match"):
        T.read_cache(p, b"another context", 100)  # bound to what it claims to be
    data = p.read_bytes()
    for i in range(len(data) * 8):
        b = bytearray(data)
        b[i // 8] ^= 1 << (i % 8)
        p.write_bytes(bytes(b))
        with pytest.raises(T.UntrustedCache):
            T.read_cache(p, b"ctx", 100)
    p.write_bytes(T.seal(b"x" * 200, b"ctx"))
    with pytest.raises(T.UntrustedCache, match="outside"):  # bounded before a byte is read
        T.read_cache(p, b"ctx", 100)
    s = T.secret_path()
    assert s.stat().st_mode & 0o777 == 0o600 and s.parent.stat().st_mode & 0o777 == 0o700


def test_the_tag_is_the_standard_libraries_hmac_sha256_with_or_without_openssl_called_directly(tmp_path, monkeypatch):
    # the tag and the SHA-256 come from _hashlib's functions directly (round 34: no hashlib/hmac imports); they
    # must be what hashlib and hmac give, byte for byte, and so must the fallback where OpenSSL is missing
    import hashlib
    import hmac

    data, context = os.urandom(100_000), b"wprog\0{}"
    expected = hmac.new(T.secret(), b"snarkd-cache/v1\0" + hashlib.sha256(context).digest() + data,
                        hashlib.sha256).digest()
    assert T.tag(data, context) == expected
    assert T.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert T.tag_matches(data, expected, context) and not T.tag_matches(data, bytes(32), context)
    monkeypatch.setattr(T, "_openssl", lambda: None)
    assert T.tag(data, context) == expected
    assert T.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert T.tag_matches(data, expected, context) and not T.tag_matches(data, bytes(32), context)


def _anon_huge_kb(address: int) -> int:
    """AnonHugePages (kB) of the mapping that holds address, from /proc/self/smaps (the kernel's own account)."""
    found = False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                found = lo <= address < hi
            elif found and head == "AnonHugePages:":
                return int(line.split()[1])
    raise AssertionError(f"no mapping holds {address:#x}")


def _thp_mode() -> str | None:
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return None
    return text[text.index("[") + 1: text.index("]")]


@pytest.mark.parametrize("nbytes,huge", [(1, True), (T.HUGE_MIN - 1, True), (T.HUGE_MIN, True),
                                         (6_081_132, True), (6_081_132, False)])
def test_fresh_pages_are_zero_writable_and_huge_from_their_threshold(nbytes, huge):
    import ctypes

    buf = T.fresh_pages(nbytes, huge)
    view = memoryview(buf)
    assert len(view) >= nbytes and not view.readonly
    assert view.tobytes() == bytes(len(view))  # zero: the caller may write only part of it
    view[nbytes - 1] = 7
    assert view[nbytes - 1] == 7
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    big = huge and nbytes >= T.HUGE_MIN
    if big:
        assert len(view) % (2 << 20) == 0  # a whole number of 2 MiB pages
    if _thp_mode() in ("madvise", "always") and (big or _thp_mode() == "madvise"):
        # MADV_POPULATE_WRITE populated it: every page there, huge where advised (the kernel may refuse a huge page
        # under memory pressure, so only "some" is asserted where advised, "none" where not and THP is madvise)
        kb = _anon_huge_kb(address)
        assert (kb > 0) if big else (kb == 0)
    del view, buf


def test_a_large_cache_file_read_into_huge_pages_reads_back_and_any_change_is_refused(tmp_path):
    d = cache_dir(tmp_path)
    p = d / "x.bin"
    payload = os.urandom(T.HUGE_MIN + 12345)
    p.write_bytes(T.seal(payload, b"ctx"))
    got = T.read_cache(p, b"ctx", 1 << 30, huge_pages=True)
    assert got.tobytes() == payload and bytes(T.read_cache(p, b"ctx", 1 << 30)) == payload
    assert got.readonly  # as the view of a bytes object is: checked data is not written
    with pytest.raises(T.UntrustedCache, match="tag does not match"):
        T.read_cache(p, b"another context", 1 << 30, huge_pages=True)
    data = bytearray(p.read_bytes())
    for at in (0, len(payload) // 2, len(data) - 1):
        changed = bytearray(data)
        changed[at] ^= 1
        p.write_bytes(bytes(changed))
        with pytest.raises(T.UntrustedCache, match="tag does not match"):
            T.read_cache(p, b"ctx", 1 << 30, huge_pages=True)
    p.write_bytes(bytes(data))
    with pytest.raises(T.UntrustedCache, match="outside"):  # bounded before a byte is read, as without huge pages
        T.read_cache(p, b"ctx", T.HUGE_MIN, huge_pages=True)


def test_links_fifos_and_devices_are_refused_at_once(tmp_path):
    d = cache_dir(tmp_path)
    (d / "zero").symlink_to("/dev/zero")
    os.mkfifo(d / "fifo")
    real = d / "real"
    real.write_bytes(T.seal(b"ok", b"c"))
    (d / "link").symlink_to(real)
    t = time.monotonic()
    for name, why in (("zero", "without following links"), ("link", "without following links"),
                      ("fifo", "a FIFO")):
        with pytest.raises(T.UntrustedCache, match=why):
            T.read_cache(d / name, b"c", 1 << 30)
    for p in (d / "fifo", "/dev/zero"):
        with pytest.raises(InputError, match="not a regular file"):
            os.close(T.open_regular(p, "key"))
    assert time.monotonic() - t < 5


def test_a_directory_others_can_write_or_own_is_refused(tmp_path):
    for mode in (0o1777, 0o775, 0o757):
        d = tmp_path / f"d{mode:o}"
        d.mkdir()
        d.chmod(mode)
        (d / "x").write_bytes(T.seal(b"ok", b"c"))
        with pytest.raises(T.UntrustedCache, match="can be written by others"):
            T.read_cache(d / "x", b"c", 10)
        assert not T.cache_dir_ok(d)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_a_file_or_directory_of_another_user_is_refused(tmp_path):
    d = cache_dir(tmp_path)
    p = d / "x"
    p.write_bytes(T.seal(b"ok", b"c"))
    os.chown(p, 20002, 20002)  # planted by another user (root may read it: it must not use it)
    with pytest.raises(T.UntrustedCache, match="owned by uid 20002"):
        T.read_cache(p, b"c", 10)
    os.chown(p, 0, 0)
    os.chown(d, 20002, 20002)
    with pytest.raises(T.UntrustedCache, match="owned by uid 20002"):
        T.read_cache(p, b"c", 10)


def test_a_secret_others_can_read_is_not_used(tmp_path):
    s = T.secret_path()
    s.parent.mkdir(parents=True, mode=0o700)
    s.write_bytes(os.urandom(32))
    s.chmod(0o644)
    with pytest.raises(T.UntrustedCache, match="mode 0600"):
        T.secret()
