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
import threading

from snarkd.engine.stages import StageFailed

log = logging.getLogger("snarkd")


class DeviceResidency:
    """The key budget on each of the engine's devices: decided (and the key uploaded) before a device stage,
    one key at a time per device; a key evicted from the host leaves every device too."""

    def __init__(self, devices: list, keys, max_resident: int, budget: int, lock):
        self.devices, self.keys, self.max_resident, self.budget = devices, keys, max_resident, budget
        self.lock = lock  # the engine's accounting lock, for the eviction counts
        self.evictions = {b.name: 0 for b in devices}  # keys dropped from each device by its budget
        self._locks = [threading.Lock() for _ in devices]
        keys.on_evict.append(self.drop)

    def ensure(self, d: int, lk, timer) -> None:
        """Room for lk on device d (LRU idle keys leave), then its upload there, timed as key_upload."""
        backend = self.devices[d]
        if backend.residency(lk.key) is not None:
            return  # the common case: no lock
        with self._locks[d]:  # device workers run at once: decide and upload one key at a time
            dropped = make_device_room(backend, self.keys, lk, self.max_resident, self.budget)
            if dropped:
                with self.lock:
                    self.evictions[backend.name] += len(dropped)
            backend.make_resident(lk.key, timer)
            why = self.keys.spoiled(lk)
            if why:  # its file changed while its arrays went up (gpu/resident.csr keeps their indices in range;
                raise StageFailed(why)  # the arrays leave the device when the key is reloaded, once unused)

    def drop(self, lk, key) -> None:
        """A key evicted from the host leaves every device too."""
        for backend in self.devices:
            if backend.residency(key) is not None:
                backend.release(key)


def resident_on(backend, keys) -> list[tuple[object, int]]:
    """(LoadedKey, bytes) of each key resident on `backend`'s device."""
    out = []
    for lk in keys.list():
        key = lk.key  # read once: a host eviction may clear it meanwhile
        if key is None:
            continue
        r = backend.residency(key)
        if r is not None:
            out.append((lk, r.bytes))
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

