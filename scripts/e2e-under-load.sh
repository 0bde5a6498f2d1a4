#!/usr/bin/env bash
# The end-to-end suite and the demo on a machine made busy on purpose: one busy loop per core runs
# beside them, so every process gets about half the CPU it would alone (a GitHub-hosted runner
# under load). Repeats ROUNDS times (default 3) and stops at the first failing round.
#
#   bash scripts/e2e-under-load.sh            # 3 rounds of: tests/e2e, then scripts/demo.sh
#   ROUNDS=1 bash scripts/e2e-under-load.sh
#
# Needs what scripts/test.sh installs (.venv, OpenClaw); everything that starts a gateway runs in
# a loopback-only network namespace. Prints one line per round and exits non-zero on a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${ROUNDS:-3}
cores=$(nproc)
logs="$root/.cache/under-load"
mkdir -p "$logs"

busy=()
stop_busy() { [ "${#busy[@]}" -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for _ in $(seq "$cores"); do
  sh -c 'while :; do :; done' &
  busy+=("$!")
done
echo "under load: $cores busy loop(s) on $cores core(s); logs in $logs"

for round in $(seq "$rounds"); do
  start=$(date +%s)
  if ! unshare --net sh -c "ip link set lo up && exec '$root/.venv/bin/pytest' -q -p no:cacheprovider tests/e2e" \
      >"$logs/e2e-$round.log" 2>&1; then
    echo "round $round: e2e FAILED after $(( $(date +%s) - start )) s (see $logs/e2e-$round.log)"
    tail -n 30 "$logs/e2e-$round.log"
    exit 1
  fi
  e2e_s=$(( $(date +%s) - start ))
  summary=$(tail -n 1 "$logs/e2e-$round.log")
  start=$(date +%s)
  if ! bash scripts/demo.sh >"$logs/demo-$round.log" 2>&1; then
    echo "round $round: e2e passed ($summary, ${e2e_s} s); demo FAILED (see $logs/demo-$round.log)"
    tail -n 30 "$logs/demo-$round.log"
    exit 1
  fi
  echo "round $round: e2e passed ($summary, ${e2e_s} s); demo as designed ($(( $(date +%s) - start )) s)"
done
echo "all $rounds round(s) passed under load"
