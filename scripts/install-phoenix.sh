#!/usr/bin/env bash
# Install a pinned Arize Phoenix into its own virtualenv at <repo>/.cache/phoenix-venv/.
#
# Phoenix is only needed by the slow real-backend test (tests/traces/test_phoenix_real.py); it is
# ~850 MB, so it never goes into the main .venv. The test also uses this venv's python to build
# OTLP protobuf payloads (opentelemetry-proto comes with Phoenix), so the main venv needs neither.
#
# Idempotent: a stamp file records the installed version; when it matches, nothing is downloaded.
# Needs python3 (>= 3.10) and access to PyPI, so run it OUTSIDE any loopback-only namespace.
# Prints, as the last line of stdout, the absolute path of the venv's `phoenix` executable.
#
# Overrides: PHOENIX_VERSION, CLAWSPEC_PHOENIX_VENV (install folder), PYTHON (interpreter).
set -euo pipefail

PHOENIX_VERSION="${PHOENIX_VERSION:-20.26.1}"
PYTHON="${PYTHON:-python3}"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CLAWSPEC_PHOENIX_VENV:-$repo_root/.cache/phoenix-venv}"
stamp="$venv/.installed"
want_stamp="arize-phoenix==$PHOENIX_VERSION"

log() { printf 'install-phoenix: %s\n' "$*" >&2; }

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" && -x "$venv/bin/phoenix" ]]; then
    log "already installed ($want_stamp)"
    printf '%s\n' "$venv/bin/phoenix"
    exit 0
fi

command -v "$PYTHON" >/dev/null || { log "$PYTHON not found on PATH"; exit 1; }
rm -f "$stamp"  # a partial install must not look complete if we fail below
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating virtualenv $venv"
    "$PYTHON" -m venv "$venv"
fi
log "installing $want_stamp (about 850 MB; a minute or two)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
# opentelemetry-proto and protobuf are Phoenix dependencies already; named so a future Phoenix
# that drops them does not silently break the test's payload builder.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$want_stamp" opentelemetry-proto protobuf >&2
"$venv/bin/python" -c "import opentelemetry.proto.collector.trace.v1.trace_service_pb2" \
    || { log "opentelemetry-proto is not importable in $venv"; exit 1; }
[[ -x "$venv/bin/phoenix" ]] || { log "phoenix executable missing in $venv/bin"; exit 1; }
printf '%s\n' "$want_stamp" >"$stamp"
log "installed $want_stamp into $venv"
printf '%s\n' "$venv/bin/phoenix"
