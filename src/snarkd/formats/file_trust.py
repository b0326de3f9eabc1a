"""How snarkd opens files: any file it is given as a regular file, never blocking; its own caches (.cwasm,
.wprog, .prep) only as data it made itself.

`open_regular(path, what)` opens without blocking (O_NONBLOCK: a FIFO would otherwise hang the open until a
writer comes) and refuses anything but a regular file (FIFOs, devices, sockets, directories) with an
InputError naming the file: the one way to open a key, SRS, witness, program or config a person names.

A cache file is trusted only when (`read_cache`):
  - it is opened without following a link (O_NOFOLLOW) and is a regular file;
  - it and its directory are owned by the running user (or root), and nobody else can write the directory
    (sshd's StrictModes: otherwise another user could plant or swap it);
  - it is no larger than its reader's bound, checked before a byte is read;
  - its last 32 bytes are the HMAC-SHA256 of the rest (and of its `context`: what it claims to be, e.g. the
    hash of the wasm it was made from) under this user's secret, a 0600 file of 32 random bytes made on first
    use under the user's cache directory (`secret_path`). A CRC anyone can recompute; the tag only the user.
Anything else raises UntrustedCache naming the file and the rule: callers warn, ignore the file and rebuild it.
`seal(data, context)` gives the bytes to write (data + tag); `cache_dir_ok(d)` says whether a directory may
hold caches (callers write only there).
"""

from __future__ import annotations

import _thread  # the locks threading.Lock is; the threading module (~1 ms of imports) is not needed here
import os
import stat

from snarkd.errors import InputError

TYPE_CHECKING = False  # pathlib stays out of a cached program's load (`snarkd witness`): paths are strings here
if TYPE_CHECKING:
    from pathlib import Path

TAG_BYTES = 32
_lock = _thread.allocate_lock()
_secret: dict[str, bytes] = {}  # secret path -> key, read once per process


class UntrustedCache(Exception):
    """A cache file that is not used (the message names the file and the rule it broke). data: on a tag that
    does not match, the bytes read (untrusted: only to say what the file seems to be)."""

    def __init__(self, message: str, data=None):
        super().__init__(message)
        self.data = data


def open_regular(path, what: str = "file", nofollow: bool = False) -> int:
    """A read-only fd of the regular file at `path`; InputError naming it otherwise (never blocks on a FIFO)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(f"{path}: the {what} is not a regular file ({_kind(st.st_mode)}); refused")
    os.set_blocking(fd, True)
    return fd


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a plain file"


def _trusted_owner(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def dir_problem(d) -> str:
    """"" when directory `d` may hold this user's caches; else why not."""
    try:
        st = os.stat(d)
    except OSError as exc:
        return f"its directory {d} cannot be read ({exc.strerror or exc})"
    if not _trusted_owner(st.st_uid):
        return f"its directory {d} is owned by uid {st.st_uid}, not by this user or root"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"its directory {d} can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    return ""


def cache_dir_ok(d) -> bool:
    return not dir_problem(d)


def secret_path() -> Path:
    """This user's cache secret: $XDG_CACHE_HOME/snarkd/cache.key (else ~/.cache/snarkd/cache.key)."""
    from pathlib import Path

    return Path(_secret_file())


def _secret_file() -> str:
    from snarkd.config.dirs import cache_secret_file

    return cache_secret_file()


def secret() -> bytes:
    """The 32-byte secret, made on first use (0600, in a 0700 directory); UntrustedCache when it cannot be
    made or is not this user's alone (then no cache is trusted, and every one is rebuilt)."""
    path = _secret_file()
    with _lock:
        key = _secret.get(path)
        if key is not None:
            return key
        folder = os.path.dirname(path)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise UntrustedCache(f"{path}: cannot make the cache secret's directory ({exc.strerror or exc})") from None
        why = dir_problem(folder)
        if why:
            raise UntrustedCache(f"{path}: the cache secret is not used: {why}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            import secrets  # only here: the secret is made once per user

            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
        except FileExistsError:
            pass
        except OSError as exc:
            raise UntrustedCache(f"{path}: cannot make the cache secret ({exc.strerror or exc})") from None
        key = _read_secret(path)
        _secret[path] = key
        return key


def _read_secret(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UntrustedCache(f"{path}: cannot read the cache secret ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise UntrustedCache(f"{path}: the cache secret must be a regular file of this user, mode 0600")
        key = fh.read(33)
    if len(key) != 32:
        raise UntrustedCache(f"{path}: the cache secret is not 32 bytes (delete it: a new one is made)")
    return key


def _openssl():
    """Python's OpenSSL module (_hashlib), or None where this Python was built without it. hashlib.sha256 and
    hmac.new(key, msg, "sha256") are its openssl_sha256 and hmac_new: called here directly, the same functions
    and the same bytes, without hashlib's and hmac's own imports (hashlib.py asks OpenSSL for a dozen algorithms
    at import, hmac.py imports warnings: ~0.9 ms of a one-shot `snarkd witness`, round 34). Loaded on first use:
    OpenSSL's load (~2-3 ms) is for processes that hash a .wasm or tag or check a cache file."""
    try:
        import _hashlib
    except ImportError:
        return None
    return _hashlib


def sha256(data=b""):
    """A SHA-256 object (hashlib.sha256's: update, digest, hexdigest) of data."""
    ossl = _openssl()
    if ossl is None:
        import hashlib

        return hashlib.sha256(data)
    return ossl.openssl_sha256(data)


def _mac(context: bytes):
    """The running HMAC-SHA256 of a cache file's tag: this user's secret, the context's digest first."""
    key, msg = secret(), b"snarkd-cache/v1\0" + sha256(context).digest()
    ossl = _openssl()
    if ossl is None:
        import hmac

        return hmac.new(key, msg, "sha256")
    return ossl.hmac_new(key, msg, digestmod="sha256")


def tag(data, context: bytes) -> bytes:
    mac = _mac(context)
    mac.update(data)
    return mac.digest()


def tag_stream(fd: int, length: int, context: bytes) -> bytes:
    """The tag of the first `length` bytes of the file open (readable) at fd, read in chunks by pread."""
    mac = _mac(context)
    pos = 0
    while pos < length:
        chunk = os.pread(fd, min(1 << 22, length - pos), pos)
        if not chunk:
            raise OSError(f"short read at {pos} of {length}")
        mac.update(chunk)
        pos += len(chunk)
    return mac.digest()


def seal(data, context: bytes) -> bytes:
    """data followed by its tag: what a cache file holds."""
    return bytes(data) + tag(data, context)


def open_cache(path) -> tuple[int, os.stat_result]:
    """(fd, its stat) of the cache file at `path` if it may be trusted as this user's: its directory's owner and
    mode, not a link, a regular file, owned by this user or root; UntrustedCache otherwise."""
    path = os.fspath(path)
    if not os.path.lexists(path):  # nothing there: no warning about its directory
        raise UntrustedCache(f"{path}: not found")
    why = dir_problem(os.path.dirname(path) or ".")
    if why:
        raise UntrustedCache(f"{path}: not used: {why}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UntrustedCache(f"{path}: not found") from None
    except OSError as exc:  # ELOOP: a symbolic link
        raise UntrustedCache(f"{path}: not used: cannot open it without following links ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    why = (f"{_kind(st.st_mode)}, not a regular file" if not stat.S_ISREG(st.st_mode) else
           f"owned by uid {st.st_uid}, not by this user or root" if not _trusted_owner(st.st_uid) else "")
    if why:
        os.close(fd)
        raise UntrustedCache(f"{path}: not used: {why}")
    os.set_blocking(fd, True)
    return fd, st


def tag_matches(data, found, context: bytes) -> bool:
    """Whether `found` is the tag of data in this context (compared in constant time)."""
    ossl = _openssl()
    if ossl is None:
        from hmac import compare_digest
    else:
        compare_digest = ossl.compare_digest  # hmac.compare_digest where OpenSSL is loaded
    return compare_digest(tag(data, context), bytes(found))


def check_tag(path, data, found: bytes, context: bytes) -> None:
    if not tag_matches(data, found, context):
        raise UntrustedCache(f"{path}: not used: its tag does not match (not made by this user's snarkd for "
                             "this input, or altered)", data)


MADV_POPULATE_WRITE = 23  # Linux 5.14+ (<sys/mman.h>); Python's mmap module does not name it
HUGE_MIN = 512 << 10  # fresh_pages: from this size, whole 2 MiB pages (a 1 MB file's read: 0.64 -> 0.36 ms)


def fresh_pages(nbytes: int, huge: bool = True):
    """A writable anonymous mapping of at least nbytes (zero), its pages populated in one call: writing into new
    memory otherwise takes a page fault per 4 KiB (a fresh process's 3.2 MB read into a bytes object: 1.7 ms of CPU,
    most of it those faults). From HUGE_MIN, where `huge` ([cpu] huge_pages, the caller's), it is a whole number of
    2 MiB pages advised for transparent huge pages and populated for writing (MADV_POPULATE_WRITE): the kernel
    starts such a mapping on a 2 MiB boundary, so every page is a huge one (the same 3.2 MB read: 0.7 ms; RSA's
    6.1 MB witness buffer populated in 0.16 ms against 1.6 in 4 KiB pages; round 34). Else, or where the kernel has
    no MADV_POPULATE_WRITE (before 5.14), 4 KiB pages populated at the mapping (MAP_POPULATE)."""
    import mmap

    nbytes = max(nbytes, 1)
    if huge and nbytes >= HUGE_MIN:
        block = mmap.mmap(-1, -(-nbytes // (2 << 20)) * (2 << 20), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            block.madvise(mmap.MADV_HUGEPAGE)
            block.madvise(MADV_POPULATE_WRITE)
            return block
        except (OSError, AttributeError):  # no such advice here (EINVAL): 4 KiB pages below
            block.close()
    return mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0))


def read_cache(path, context: bytes, max_bytes: int, huge_pages: bool = False) -> memoryview:
    """The data of the cache file at `path` (its tag checked and removed); UntrustedCache otherwise. huge_pages: a
    file of HUGE_MIN or more is read into fresh_pages (a native witness program, read whole by every process that
    replays it), else into a new bytes object."""
    fd, st = open_cache(path)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        if not TAG_BYTES <= st.st_size <= max_bytes + TAG_BYTES:
            raise UntrustedCache(f"{path}: not used: {st.st_size} bytes, outside 32..{max_bytes + TAG_BYTES}")
        if huge_pages and st.st_size >= HUGE_MIN:
            buf = fresh_pages(st.st_size)
            view, got = memoryview(buf), 0
            while got < st.st_size:
                n = fh.readinto(view[got: st.st_size])
                if not n:
                    break
                got += n
            view.release()
            if got != st.st_size:
                raise UntrustedCache(f"{path}: not used: changed while it was read")
            buf = memoryview(buf).toreadonly()[: st.st_size]  # read-only, as a bytes object's view is
        else:
            buf = fh.read(st.st_size)  # into a new bytes object: no zero-filled buffer written a second time
    if len(buf) != st.st_size:
        raise UntrustedCache(f"{path}: not used: changed while it was read")
    data = memoryview(buf)[:-TAG_BYTES]
    check_tag(path, data, buf[-TAG_BYTES:], context)
    return data
