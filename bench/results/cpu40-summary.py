# Round 38: one line per circuit and tool of a prove_vs_rapidsnark.py JSON: wall / CPU medians, CPU min-max (the
# spread over fresh processes), ratios to rapidsnark (or snarkjs). python bench/results/cpu40-summary.py FILE.json...
import json, statistics, sys
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        ref = "rapidsnark" if "rapidsnark" in r["median_s"] else "snarkjs"
        print(f"{f.split('/')[-1]} {r['dir'].rstrip('/').split('/')[-1]} runs {r['runs']} load {r['load_average_median']:.2f}"
              f" verified {r['verified_by_snarkjs']}")
        for t, w in r["median_s"].items():
            c = r["cpu_s"][t]
            q = statistics.quantiles(c, n=4) if len(c) > 2 else [min(c), 0, max(c)]
            rat = "" if t == ref else (f"  /{ref} wall {w / r['median_s'][ref]:.3f} cpu {r['median_cpu_s'][t] / r['median_cpu_s'][ref]:.3f}"
                                       if ref in r["median_s"] else "")
            print(f"  {t:24s} wall {w:7.3f} s cpu {r['median_cpu_s'][t]:7.3f} (min {min(c):.3f} IQR {q[0]:.3f}-{q[2]:.3f}"
                  f" max {max(c):.3f}) rss {r['median_rss_mib'][t]:.0f} MiB{rat}")
