#!/usr/bin/env bash
# Install the pinned OpenClaw gateway (and the Node 24 it needs) into ClawSpec's per-user cache,
# $CLAWSPEC_CACHE_DIR/openclaw/<version> (default: ${XDG_CACHE_HOME:-~/.cache}/clawspec/...): the
# same folder `clawspec run --bring-up` installs into and reuses, so a clone and an installed
# package share one copy. The work is done by clawspec/gateway/install.py (standard library only).
#
# Idempotent: a stamp file records the installed versions; when it matches, nothing is downloaded.
# Needs python3, a system npm (any version that can run npm) and access to the npm registry.
# Prints, as the last line of stdout, the absolute path of a launcher that runs openclaw on Node 24.
#
# Overrides: OPENCLAW_VERSION, NODE_PKG_SPEC, CLAWSPEC_CACHE_DIR, CLAWSPEC_OPENCLAW_DIR (the exact
# install folder, e.g. /opt/openclaw in the container image).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHONPATH="$repo_root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m clawspec.gateway.install
