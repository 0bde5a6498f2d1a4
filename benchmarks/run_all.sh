#!/usr/bin/env bash
# Run every benchmark (prints numbers and ratios; asserts nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
for bench in benchmarks/bench_*.py; do
  echo "== $bench"
  .venv/bin/python "$bench"
done
