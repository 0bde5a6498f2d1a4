#!/usr/bin/env bash
# Run every benchmark (prints figures, goals and ratios; asserts nothing).
#   bash benchmarks/run_all.sh            # full: several repeats, 10,000-scenario cases, 1 GiB log
#   bash benchmarks/run_all.sh --quick    # fewer repeats, no 10,000-scenario overhead case
# CLAWSPEC_BENCH_SOURCE=<checkout> measures another checkout's code with this harness.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--quick" ]; then
  export CLAWSPEC_BENCH_QUICK=1
fi
# Compiled modules, as an installed package has them: start-up figures must not include
# compiling ClawSpec's sources (PYTHONDONTWRITEBYTECODE would otherwise leave none).
.venv/bin/python -m compileall -q clawspec ${CLAWSPEC_BENCH_SOURCE:+"$CLAWSPEC_BENCH_SOURCE/clawspec"} >/dev/null
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
for bench in benchmarks/bench_*.py; do
  echo "== $bench"
  .venv/bin/python "$bench"
done
# Each speed piece on and off (the 10,000-scenario cases take half an hour: run them by hand).
echo "== benchmarks/machinery_on_off.py"
repeats=5
if [ "${CLAWSPEC_BENCH_QUICK:-}" = 1 ]; then
  repeats=1
fi
.venv/bin/python benchmarks/machinery_on_off.py --repeats "$repeats" \
  --cases validate-examples,validate-1k,run-1k
