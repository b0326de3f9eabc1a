"""Where each key lives, and the key budget on each GPU.

The host side of the key budget is the KeyStore's (keys.py: LRU eviction of idle
mapped keys). Each GPU keeps a key's arrays (bases, CSR, window tables) once it
has proved with it; before a device stage uploads a key that is not resident
there, `make_device_room` drops the least recently used idle keys from that
device until the new key fits [keys] max_resident and device_budget. A key with
a job queued or running is never dropped (the device then runs over budget, and
says so in the log); a dropped key is uploaded again by its next device stage.
"""

from __future__ import annotations

import logging

log = logging.getLogger("snarkd")


def resident_on(backend, keys) -> list[tuple[object, int]]:
    """(LoadedKey, bytes) of each key resident on `backend`'s device."""
    out = []
    for lk in keys.list():
        key = lk.key  # read once: a host eviction may clear it meanwhile
        if key is None:
            continue
        r = backend.residency(key)
        if r is not None:
            out.append((lk, r["bytes"]))
    return out


def make_device_room(backend, keys, lk, max_resident: int, budget: int) -> list:
    """Drop LRU idle keys from `backend`'s device so that `lk` fits there; returns the keys dropped."""
    if not (max_resident or budget) or backend.residency(lk.key) is not None:
        return []
    need = lk.nbytes  # bases and CSR are about the mapped size; window tables come on top
    there = [(k, b) for k, b in resident_on(backend, keys) if k is not lk]

    def over() -> bool:
        return bool((max_resident and len(there) + 1 > max_resident)
                    or (budget and sum(b for _, b in there) + need > budget))

    dropped = []
    while over():
        idle = [(k, b) for k, b in there if k.users == 0]
        if not idle:
            log.warning("key budget on %s exceeded: %d key(s), %d bytes resident and none idle; %s is uploaded "
                        "anyway", backend.name, len(there), sum(b for _, b in there), lk.id)
            break
        victim, nbytes = min(idle, key=lambda kb: kb[0].lru_stamp)
        key = victim.key
        there.remove((victim, nbytes))
        if key is not None:
            backend.release(key)
        dropped.append(victim)
        log.info("key evicted from %s id=%s bytes=%d (least recently used; room for %s)", backend.name, victim.id,
                 nbytes, lk.id)
    return dropped


def key_infos(keys, devices) -> list[dict]:
    """Each key's info() plus where it is resident: the host, and each device with its bytes and tables."""
    out = []
    for lk in keys.list():
        info = lk.info()
        key = lk.key
        info["devices"] = []
        if key is not None:
            for b in devices:
                r = b.residency(key)
                if r is not None:
                    info["devices"].append({"device": b.name, **r})
        out.append(info)
    return out
