"""A local npm registry on 127.0.0.1 serving the packages of an OpenClaw install, for npm itself.

Tests run in a loopback-only network namespace, so the real registry is out of reach. This one
speaks its wire format: `GET /<name>` (a scoped name arrives as `@scope%2fname`) answers the
packument (`name`, `dist-tags`, `versions` with each version's dependencies, platform fields and
`dist: {tarball, integrity}`), and the tarball URL answers the package's `.tgz`.

What it serves is what an earlier, real install fetched: every package of the install's
`package-lock.json` files (their versions, dependencies and integrity), the tarballs read from
npm's own content cache (`<npm cache>/_cacache/content-v2/sha512/…`, addressed by integrity).
Packages for other platforms appear in the packuments (npm must see their `os`/`cpu` to skip
them) without a tarball, as none was ever downloaded.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

# Lockfile fields npm reads from a packument version to resolve and place a package.
_FIELDS = (
    "dependencies",
    "optionalDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "bundleDependencies",
    "bin",
    "engines",
    "os",
    "cpu",
    "libc",
    "hasInstallScript",
    "license",
)


class MissingTarball(Exception):
    """npm's cache does not hold a tarball the install needs."""


def content_path(npm_cache: Path, integrity: str) -> Path:
    """Where npm's cache keeps the content with this sha512 integrity."""
    sha512 = next(part for part in integrity.split() if part.startswith("sha512-"))
    digest = base64.b64decode(sha512[len("sha512-") :]).hex()
    return npm_cache / "_cacache" / "content-v2" / "sha512" / digest[:2] / digest[2:4] / digest[4:]


class LocalNpmRegistry:
    """`with LocalNpmRegistry(lockfiles, npm_cache) as registry:` then npm_config_registry =
    registry.url; `registry.requests` lists every path asked for."""

    def __init__(self, lockfiles: Iterable[Path], npm_cache: Path) -> None:
        self.npm_cache = npm_cache
        self.versions: dict[str, dict[str, dict[str, Any]]] = {}
        self.tarballs: dict[str, Path] = {}  # URL path -> file
        self.requests: list[str] = []
        self.tarball_delay_s = 0.0  # a slow network: each tarball starts after this pause
        self._lock = threading.Lock()
        for lockfile in lockfiles:
            self._add(json.loads(lockfile.read_text(encoding="utf-8")))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def _add(self, lock: dict[str, Any]) -> None:
        for path, entry in lock.get("packages", {}).items():
            if not path or entry.get("link") or entry.get("inBundle") or "version" not in entry:
                continue
            name = entry.get("name") or path.rsplit("node_modules/", 1)[-1]
            version = entry["version"]
            meta: dict[str, Any] = {"name": name, "version": version}
            meta.update({k: entry[k] for k in _FIELDS if k in entry})
            integrity = entry.get("integrity")
            if integrity:
                url_path = f"/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"
                meta["dist"] = {"integrity": integrity, "tarball": url_path}
                content = content_path(self.npm_cache, integrity)
                if content.is_file():
                    self.tarballs[url_path] = content
                elif not entry.get("optional"):
                    raise MissingTarball(f"{name}@{version}: not in npm's cache ({content})")
            self.versions.setdefault(name, {})[version] = meta

    def packument(self, name: str) -> dict[str, Any] | None:
        versions = self.versions.get(name)
        if not versions:
            return None
        out = {v: {**meta, "dist": dict(meta.get("dist", {}))} for v, meta in versions.items()}
        for meta in out.values():
            if "tarball" in meta["dist"]:
                meta["dist"]["tarball"] = self.url.rstrip("/") + meta["dist"]["tarball"]
        latest = sorted(versions, key=_version_key)[-1]
        return {"name": name, "dist-tags": {"latest": latest}, "versions": out}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with registry._lock:
                    registry.requests.append(path)
                tarball = registry.tarballs.get(unquote(path))
                if tarball is not None:
                    time.sleep(registry.tarball_delay_s)
                    self._send(200, tarball.read_bytes(), "application/octet-stream")
                    return
                packument = registry.packument(unquote(path.lstrip("/")))
                if packument is None:
                    self._send(404, b'{"error":"Not found"}', "application/json")
                    return
                self._send(200, json.dumps(packument).encode(), "application/json")

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def __enter__(self) -> LocalNpmRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _version_key(version: str) -> tuple[int, ...]:
    core = version.split("-", 1)[0].split("+", 1)[0]
    return tuple(int(p) if p.isdigit() else 0 for p in core.split("."))
