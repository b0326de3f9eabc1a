import mmap, os, time, sys
path = sys.argv[2]
size = os.path.getsize(path)
def plain():
    fd = os.open(path, os.O_RDONLY)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        buf = fh.read(size)
    return buf
def huge():
    fd = os.open(path, os.O_RDONLY)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        m = mmap.mmap(-1, -(-size // (2<<20)) * (2<<20), flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)
        m.madvise(mmap.MADV_HUGEPAGE); m.madvise(23)
        v = memoryview(m)
        got = 0
        while got < size:
            n = fh.readinto(v[got:size])
            if not n: break
            got += n
        v.release()
    return m
f = {"plain": plain, "huge": huge}[sys.argv[1]]
ts = []
for i in range(int(sys.argv[3])):
    t = time.thread_time(); b = f(); ts.append(time.thread_time() - t); del b
ts.sort(); print(sys.argv[1], size, "median ms", round(ts[len(ts)//2]*1e3, 3), "min", round(ts[0]*1e3,3))
