# usage: variant.py in.cpp out.cpp f1,f2,...   (mark the named generated functions SNARKD_WC_HOT)
import re,sys
src=open(sys.argv[1]).read().split("\n")
hot=set(x for x in sys.argv[3].split(",") if x)
out=[]
for l in src:
    m=re.match(r'^(static )?((?:SNARKD_WC_\w+ )*)(void|int32_t|int64_t) (\w+)\(',l)
    if m and m.group(4) in hot:
        l=(m.group(1) or "")+"SNARKD_WC_HOT "+l[len(m.group(1) or ""):]
    out.append(l)
open(sys.argv[2],"w").write("\n".join(out))
