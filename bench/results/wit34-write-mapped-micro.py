import mmap, os, time, sys
n = 6081196 - 64
H = 64
src = os.urandom(n)
def current(path):
    out = mmap.mmap(-1, 8<<20, flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)
    out.madvise(mmap.MADV_HUGEPAGE); out.madvise(23)
    out[:n] = src  # the run
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_RDWR|os.O_CREAT|os.O_TRUNC, 0o644)
    os.write(fd, b"h"*H); os.write(fd, memoryview(out)[:n])
    os.close(fd); os.replace(tmp, path); out.close()
def mapped(path, populate=True):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_RDWR|os.O_CREAT|os.O_TRUNC, 0o644)
    os.ftruncate(fd, H + n)
    m = mmap.mmap(fd, H + n, flags=mmap.MAP_SHARED)
    if populate: m.madvise(23)
    m[H:H+n] = src  # the run
    m[:H] = b"h"*H
    m.close(); os.close(fd); os.replace(tmp, path)
def mapped_nopop(path): mapped(path, False)
f = {"current": current, "mapped": mapped, "mapped_nopop": mapped_nopop}[sys.argv[1]]
ts = []
for i in range(int(sys.argv[2])):
    t = time.thread_time(); f("/tmp/wit34/wb/o.wtns"); ts.append(time.thread_time() - t)
ts.sort(); print(sys.argv[1], "median ms", round(ts[len(ts)//2]*1e3, 3), "min", round(ts[0]*1e3,3))
