#!/usr/bin/env bash
# Regenerate requirements/image.txt: the exact versions (with their sha256 hashes) of the Python
# packages the container image installs, resolved from pyproject.toml's [project] dependencies.
# The Dockerfile installs it with `pip install --require-hashes -r requirements/image.txt`
# (every transitive dependency pinned, nothing resolved at build time).
#
# Run it after changing the dependencies in pyproject.toml, or to take newer releases; review the
# diff and commit it. Needs Python 3.11 (the image's) and PyPI; uses pip-tools in a temp venv.
#   bash scripts/lock-image-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
  || { echo "lock-image-deps: needs Python 3.11 (the image's Python); set PYTHON=" >&2; exit 1; }

# Resolve against PyPI only, as the image build does: no pip.conf, local wheel folders or
# constraints of this machine.
export PIP_CONFIG_FILE=/dev/null
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_NO_INDEX
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check "pip-tools>=7.4"

mkdir -p requirements
# Only [project] dependencies (not the test extra); --generate-hashes pins every file of each
# release, so the lock works on any platform the image is built for.
(cd "$tmp" && cp "$OLDPWD/pyproject.toml" . && \
  CUSTOM_COMPILE_COMMAND="bash scripts/lock-image-deps.sh" \
  "$tmp/venv/bin/pip-compile" --quiet --generate-hashes --strip-extras --allow-unsafe \
    --index-url https://pypi.org/simple --no-emit-index-url --no-emit-find-links \
    --output-file "$OLDPWD/requirements/image.txt" pyproject.toml)
echo "lock-image-deps: wrote requirements/image.txt ($(grep -c '^[A-Za-z0-9]' requirements/image.txt) packages)"
