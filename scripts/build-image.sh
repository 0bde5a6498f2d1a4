#!/usr/bin/env bash
# Build the real Dockerfile and run the image the way the GitHub runner runs a Docker action, on
# the bundled examples (bring-up + `model_traffic: replay`), from a git clone of this checkout,
# with no network but loopback. Checks the designed verdicts: 3 passed, 3 failed, 1 errored (the
# examples tagged demo-failure fail on purpose, so the action itself exits 1).
#
#   bash scripts/build-image.sh            # build + run (~5 min from nothing, ~3 min cached)
#   bash scripts/build-image.sh --no-run   # build only (prints the image size)
#   bash scripts/build-image.sh --run-only # run the image built last (CLAWSPEC_IMAGE) again
#
# Engine: `docker` when a daemon answers (base python:3.11-slim-bookworm from Docker Hub);
# otherwise `buildah` (installed from Debian when missing and root) on a local base: Debian
# bookworm bootstrapped with debootstrap from the Debian archive, with python3 (3.11) in a venv
# at /usr/local, so `python` and `pip` are in /usr/local/bin as in the official image. That base
# is cached in .cache/image-base/ (an OCI archive), so reruns skip the bootstrap.
# The run happens in `buildah run --network none` (docker: `docker run --network none`): the
# gateway and everything it starts only ever see 127.0.0.1.
#
# Env: CLAWSPEC_IMAGE (tag, default localhost/clawspec:dev), CLAWSPEC_ENGINE (docker|buildah),
# BUILDAH_RUNTIME (default runc).
# Logs: .cache/image-build/{build,run}.log. Exit 0 only when the run ended as designed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

run_it=1
build_it=1
for arg in "$@"; do
  case "$arg" in
    --no-run) run_it=0 ;;
    --run-only) build_it=0 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "build-image: unknown argument $arg" >&2; exit 2 ;;
  esac
done

image=${CLAWSPEC_IMAGE:-localhost/clawspec:dev}
base_image=localhost/clawspec-base:bookworm
logs="$root/.cache/image-build"
base_cache="$root/.cache/image-base"
mkdir -p "$logs" "$base_cache"
log() { printf 'build-image: %s\n' "$*" >&2; }
now() { date +%s; }
t_start=$(now)

# ------------------------------------------------------------------------------------ engine
engine=${CLAWSPEC_ENGINE:-}
if [ -z "$engine" ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    engine=docker
  else
    engine=buildah
  fi
fi
# runc: Debian's default crun refuses hosts with hybrid cgroups ("cgroups in hybrid mode not
# supported"), runc runs there and everywhere else.
if [ "$engine" = buildah ] && { ! command -v buildah >/dev/null || ! command -v runc >/dev/null; }; then
  [ "$(id -u)" -eq 0 ] || { log "no docker daemon; needs buildah and runc (apt-get install buildah runc)"; exit 1; }
  log "installing buildah and runc from Debian"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q buildah runc >/dev/null
fi
runtime=()
[ "$engine" = buildah ] && runtime=(--runtime "${BUILDAH_RUNTIME:-runc}")
log "engine: $engine ${runtime[*]}"

# ------------------------------------------------------------------------------------ local base
# Bump when the recipe below changes (the cached archive is rebuilt).
base_recipe="3 slim-like bookworm minbase python3 python3-venv ca-certificates netbase tzdata venv:/usr/local"
base_archive="$base_cache/clawspec-base-bookworm.oci.tar"

make_base() {
  local rootfs="$base_cache/rootfs"
  if [ ! -f "$rootfs/.debootstrap-ok" ]; then
    command -v debootstrap >/dev/null || {
      [ "$(id -u)" -eq 0 ] || { log "debootstrap missing"; exit 1; }
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
    }
    log "bootstrapping Debian bookworm (minbase + python3) into $rootfs"
    rm -rf "$rootfs"
    debootstrap --variant=minbase \
      --include=python3,python3-venv,ca-certificates,netbase,tzdata \
      bookworm "$rootfs" http://deb.debian.org/debian >"$logs/debootstrap.log" 2>&1
    touch "$rootfs/.debootstrap-ok"
  fi
  # As the official image: updates and security in the sources; `python`/`pip` in /usr/local/bin
  # (a venv over Debian's 3.11, so `pip install` is allowed: no PEP 668 refusal), no apt lists.
  cat >"$rootfs/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  # The apt and dpkg settings of Debian's official -slim images (the python:*-slim base): apt
  # keeps no downloaded .deb files or caches, dpkg installs no docs, man pages or translations.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  printf 'Acquire::Languages "none";\n' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  printf 'Acquire::GzipIndexes "true";\n' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  printf 'Apt::AutoRemove::SuggestsImportant "false";\n' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{groff,info,linda,lintian/overrides,locale,man}/*
  chroot "$rootfs" /usr/bin/python3 -m venv /usr/local
  chroot "$rootfs" /usr/local/bin/python -c 'import sys, tomllib, ssl; assert sys.version_info[:2] == (3, 11)'
  chroot "$rootfs" /usr/local/bin/pip --version >/dev/null
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/tmp/* "$rootfs/.debootstrap-ok"
  tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "$base_cache/rootfs.tar" .
  local ctr
  ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$base_cache/rootfs.tar" / >/dev/null
  buildah config --env LANG=C.UTF-8 \
    --env PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd '["python3"]' --label org.opencontainers.image.description="Debian bookworm + python3.11 (local stand-in for python:3.11-slim-bookworm)" \
    "$ctr"
  buildah commit --quiet --rm "$ctr" "$base_image" >/dev/null
  rm -f "$base_archive"
  buildah push --quiet "$base_image" "oci-archive:$base_archive" >/dev/null
  printf '%s\n' "$base_recipe" >"$base_archive.recipe"
  rm -rf "$rootfs" "$base_cache/rootfs.tar"
}

prepare_base() {
  local t0 recipe_ok=0 id
  t0=$(now)
  [ -f "$base_archive.recipe" ] && [ "$(cat "$base_archive.recipe")" = "$base_recipe" ] && recipe_ok=1
  if [ "$recipe_ok" = 1 ] && buildah inspect --type image "$base_image" >/dev/null 2>&1; then
    log "base $base_image: in the local store"
  elif [ "$recipe_ok" = 1 ] && [ -f "$base_archive" ]; then
    log "base $base_image: loading the cached $base_archive"
    id=$(buildah pull --quiet "oci-archive:$base_archive")
    buildah tag "$id" "$base_image"
  else
    make_base
  fi
  log "base ready in $(( $(now) - t0 )) s"
}

# ------------------------------------------------------------------------------------ build
build_image() {
  local args=() ca code t0 size sctr smnt
  if [ "$engine" = buildah ]; then
    prepare_base
    args+=(--build-arg "PYTHON_IMAGE=$base_image")
    # Behind a TLS-inspecting proxy (this machine's registries answer with its own CA), the
    # build's npm and pip must trust that CA: bind it in for the build only (buildah -v, never in
    # a layer; only empty mount points remain), with an npmrc and a pip.conf pointing at it.
    ca=${CLAWSPEC_BUILD_CA_BUNDLE:-${SSL_CERT_FILE:-}}
    if [ -n "$ca" ] && [ -f "$ca" ]; then
      printf 'cafile=/run/clawspec-build-ca.crt\n' >"$logs/build-npmrc"
      printf '[global]\ncert = /run/clawspec-build-ca.crt\n' >"$logs/build-pip.conf"
      args+=(-v "$ca:/run/clawspec-build-ca.crt:ro" -v "$logs/build-npmrc:/root/.npmrc:ro"
             -v "$logs/build-pip.conf:/etc/pip.conf:ro")
      log "the build trusts the CA bundle $ca (mounted for the build only)"
    fi
  fi
  t0=$(now)
  log "building $image from Dockerfile (log: $logs/build.log)"
  set +e
  if [ "$engine" = docker ]; then
    docker build -t "$image" . >"$logs/build.log" 2>&1
  else
    # --network host: the build itself needs the Debian, npm and PyPI registries.
    buildah build "${runtime[@]}" --layers --network host -t "$image" "${args[@]}" \
      -f Dockerfile . >"$logs/build.log" 2>&1
  fi
  code=$?
  set -e
  if [ "$code" != 0 ]; then
    tail -n 40 "$logs/build.log" >&2
    log "build failed (exit $code)"
    exit 1
  fi
  t_build=$(( $(now) - t0 ))
  if [ "$engine" = docker ]; then
    size="$(docker image inspect --format '{{.Size}}' "$image") bytes"
  else
    size=$(buildah images --format '{{.Size}}' "$image")
    sctr=$(buildah from --quiet "$image")
    smnt=$(buildah mount "$sctr")
    size="$size; du: $(du -sxh "$smnt" | cut -f1) in all, /opt/openclaw $(du -sh "$smnt/opt/openclaw" | cut -f1), site-packages $(du -sh "$smnt"/usr/local/lib/python3.11/site-packages | cut -f1)"
    buildah umount "$sctr" >/dev/null
    buildah rm "$sctr" >/dev/null
  fi
  log "built $image in ${t_build} s; size: $size"
}

t_build=0
[ "$build_it" = 1 ] && build_image
[ "$run_it" = 1 ] || exit 0

# ------------------------------------------------------------------------------------ run
# A git clone of the checkout (committed state) is the workspace, as actions/checkout gives it.
t0=$(now)
work=$(mktemp -d /tmp/clawspec-action.XXXXXX)
ctr=""
cleanup() {
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
git clone --quiet "$root" "$work/workspace"
mkdir -p "$work/file_commands" "$work/home" "$work/workflow"
: >"$work/file_commands/step_summary"
: >"$work/file_commands/set_output"
printf '{"ref": "refs/heads/main", "repository": {"full_name": "local/clawspec"}}\n' \
  >"$work/workflow/event.json"

# The runner's environment for a Docker action step, and every input of action.yml as INPUT_*
# (its default, an expression default such as `${{ github.token }}` being empty here).
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
"$py" -c 'import yaml' 2>/dev/null || { log "$py cannot import yaml (PyYAML): run scripts/test.sh once, or pip install pyyaml"; exit 1; }
envs=(
  "CI=true" "GITHUB_ACTIONS=true" "HOME=/github/home"
  "GITHUB_WORKSPACE=/github/workspace"
  "GITHUB_STEP_SUMMARY=/github/file_commands/step_summary"
  "GITHUB_OUTPUT=/github/file_commands/set_output"
  "GITHUB_EVENT_PATH=/github/workflow/event.json" "GITHUB_EVENT_NAME=workflow_dispatch"
  "GITHUB_REPOSITORY=local/clawspec" "GITHUB_SHA=$(git -C "$work/workspace" rev-parse HEAD)"
  "GITHUB_REF=refs/heads/main" "GITHUB_WORKFLOW=build-image" "GITHUB_JOB=clawspec"
  "GITHUB_RUN_ID=1" "GITHUB_RUN_ATTEMPT=1" "RUNNER_OS=Linux"
)
while IFS= read -r line; do envs+=("$line"); done < <("$py" - <<'PY'
import yaml
inputs = yaml.safe_load(open("action.yml", encoding="utf-8"))["inputs"]
given = {"working_directory": "examples", "bring_up": "true", "model_traffic": "replay"}
for name, spec in inputs.items():
    default = str(spec.get("default", ""))
    value = given.get(name, "" if "${{" in default else default)
    print("INPUT_" + name.replace(" ", "_").upper() + "=" + value)
PY
)

log "running the action on examples/ (bring-up, replay; no network but loopback; log: $logs/run.log)"
mounts=(-v "$work/workspace:/github/workspace" -v "$work/file_commands:/github/file_commands"
        -v "$work/home:/github/home" -v "$work/workflow:/github/workflow")
set +e
if [ "$engine" = docker ]; then
  env_flags=()
  for e in "${envs[@]}"; do env_flags+=(-e "$e"); done
  timeout 1800 docker run --rm --network none --workdir /github/workspace "${mounts[@]}" \
    "${env_flags[@]}" "$image" >"$logs/run.log" 2>&1
  code=$?
else
  ctr=$(buildah from --quiet "$image")
  env_flags=()
  for e in "${envs[@]}"; do env_flags+=(--env "$e"); done
  # buildah run does not apply ENTRYPOINT: take it from the image config.
  mapfile -t entry < <(buildah inspect --type image "$image" \
    | "$py" -c 'import json, sys; print("\n".join(json.load(sys.stdin)["OCIv1"]["config"]["Entrypoint"]))')
  timeout 1800 buildah run "${runtime[@]}" --network none --workingdir /github/workspace "${mounts[@]}" \
    "${env_flags[@]}" "$ctr" -- "${entry[@]}" >"$logs/run.log" 2>&1
  code=$?
fi
set -e
t_run=$(( $(now) - t0 ))
log "the action exited $code after ${t_run} s"
rm -rf "$logs/reports" "$logs/file_commands"
cp -r "$work/file_commands" "$logs/file_commands"
[ -d "$work/workspace/examples/clawspec-reports" ] && cp -r "$work/workspace/examples/clawspec-reports" "$logs/reports"

# ------------------------------------------------------------------------------------ check
set +e
"$py" - "$work" "$code" <<'PY'
import json
import pathlib
import re
import sys

work, code = pathlib.Path(sys.argv[1]), int(sys.argv[2])
text = (work / "file_commands" / "set_output").read_text(encoding="utf-8")
outputs, lines, i = {}, text.splitlines(), 0
while i < len(lines):  # name=value, or name<<DELIM … DELIM
    line = lines[i]
    if "<<" in line and "=" not in line.split("<<", 1)[0]:
        name, delim = line.split("<<", 1)
        j = lines.index(delim, i + 1)
        outputs[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
        continue
    if "=" in line:
        name, value = line.split("=", 1)
        outputs[name] = value
    i += 1
summary = (work / "file_commands" / "step_summary").read_text(encoding="utf-8")
report = work / "workspace" / "examples" / "clawspec-reports" / "clawspec-report.json"
print("verdicts:")
if report.exists():
    for s in json.loads(report.read_text(encoding="utf-8"))["scenarios"]:
        tag = " (demo-failure)" if "demo-failure" in (s.get("tags") or []) else ""
        print(f"  {s['status'].upper():6} {s.get('name')}{tag}")
print("outputs: " + ", ".join(f"{k}={outputs.get(k, '?')}" for k in
                              ("total", "passed", "failed", "errored", "skipped", "summary")))
first = next((ln for ln in summary.splitlines() if re.search(r"\d+ scenarios", ln)), "")
print(f"job summary: {len(summary)} bytes; {first.strip()[:200]}")
want = {"passed": "3", "failed": "3", "errored": "1"}
ok = code == 1 and all(outputs.get(k) == v for k, v in want.items()) and "failed" in summary
print("as designed (exit 1; 3 passed, 3 failed, 1 errored): " + ("yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
ok=$?
set -e
if [ "$ok" != 0 ]; then
  echo "--- last lines of $logs/run.log" >&2
  tail -n 30 "$logs/run.log" >&2
fi
log "total $(( $(now) - t_start )) s (build ${t_build} s, run ${t_run} s)"
exit "$ok"
