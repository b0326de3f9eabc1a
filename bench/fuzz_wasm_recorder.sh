#!/usr/bin/env bash
# The long fuzz run of the native witness recorder (tests/fuzz, target wasm) on a sanitizer build of
# snarkd.native._witness (AddressSanitizer + UndefinedBehaviorSanitizer, -O1 -g), in a copy of src/:
#
#   bash bench/fuzz_wasm_recorder.sh [N=10000] [SEED=7] [OUT=bench/results/fuzz-wasm-recorder.json]
#
# Writes OUT (the harness's report: outcomes, findings with a replay command each, peak RSS, seconds)
# and prints the sanitizers' report, if any, on stderr. CI runs a short one (.ci/run: N=300, OUT in a
# temporary directory) so that every change to the recorder meets the sanitizers.
# A sanitizer error aborts the process: the run then has no JSON and exits non-zero. Needs gcc,
# the repository's venv (pybind11 for the headers) and `npm ci` (the seeds are compiled with circom).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
SEED=${2:-7}
OUT=${3:-bench/results/fuzz-wasm-recorder.json}
LOG=${OUT%.json}.log
PY=${PYTHON:-python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r src/snarkd "$work/"
suffix=$($PY -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
pyinc=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
pybind=$($PY -c 'import pybind11; print(pybind11.get_include())')
g++ -std=c++17 -shared -fPIC -fvisibility=hidden -O1 -g -fno-omit-frame-pointer -fno-strict-aliasing -fwrapv \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -DSNARKD_BUILD_MARCH='"asan"' \
    -Isrc/snarkd/native -I"$pybind" -I"$pyinc" src/snarkd/native/witness_module.cpp \
    -o "$work/snarkd/native/_witness$suffix" -pthread

# The interpreter is not instrumented: the runtimes are preloaded. wasmtime handles its own SIGSEGVs
# (traps), so ASan leaves that signal alone; leaks are not looked for (Python's own are many).
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export SNARKD_FUZZ_SRC="$work" SNARKD_FUZZ_TRACE=1
mkdir -p "$(dirname "$OUT")"
start=$(date +%s)
# --mem-mib 0: ASan reserves terabytes of shadow memory, which RLIMIT_DATA would refuse
$PY tests/fuzz/harness.py --target wasm --n "$N" --seed "$SEED" --timeout 120 --mem-mib 0 \
    --json "$OUT" > "$work/out.json" 2> "$work/err.txt" || status=$?
unset LD_PRELOAD
grep -E "ERROR: AddressSanitizer|runtime error:|SUMMARY:" "$work/err.txt" >&2 || true
if [ "${status:-0}" != 0 ]; then  # keep what the process said last (a sanitizer report, a hang's traceback)
    tail -n 200 "$work/err.txt" > "$LOG"
    echo "the last 200 lines of its stderr: $LOG" >&2
fi
echo "fuzz-wasm-recorder: N=$N seed=$SEED, $(( $(date +%s) - start )) s, exit ${status:-0}" >&2
exit "${status:-0}"
