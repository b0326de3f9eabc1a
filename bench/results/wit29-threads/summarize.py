"""Medians over the rounds of bench/results/wit29-threads*-pairs.sh's JSON files: python summarize.py DIR."""
import glob, json, statistics, sys, collections
out = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
loads = []
for f in sorted(glob.glob(f"{out}/wit29-threads-*.json")):
    side = f.split("wit29-threads-")[1].rsplit("-", 1)[0]
    d = json.load(open(f))
    loads += [float(l[0]) for l in d["load"]]
    for n, r in d["by_threads"].items():
        rows[side][int(n)].append(r)
print(f"load (1-min) {min(loads):.1f}-{max(loads):.1f}")
print("side      N  reps  CPU ms/run  user   sys   minflt  wall med  per s")
for side in sorted(rows, key=lambda x: (x.split("-")[-1], x)):
    for n in sorted(rows[side]):
        rs = rows[side][n]
        m = lambda k: statistics.median(r[k] for r in rs)
        print(f"{side:9s} {n:2d} {len(rs):4d}  {m('cpu_ms'):9.2f} {m('user_ms'):6.2f} {m('sys_ms'):5.2f} {m('minflt'):7.1f} {m('wall_median_ms'):9.1f} {m('per_s'):6.2f}")
