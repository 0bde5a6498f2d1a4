"""`dir:PATH`: the history in a local folder (the default store; zero set-up).

Also what a CI cache holds (GitLab `cache: paths: [.clawspec-history]`, a Jenkins workspace
folder): the folder is the whole store, layout in `clawspec/history/store.py`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from clawspec.history.store import FolderStore, HistoryError


class DirBlobs:
    """`Blobs` over a local folder; keys are `/`-separated paths below it."""

    def __init__(self, root: Path, label: str) -> None:
        self.root = root
        self.label = label

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*[part for part in key.split("/") if part])

    def read(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise HistoryError(f"{self.location(key)}: cannot read: {exc.strerror}") from None

    def write(self, key: str, data: bytes) -> None:
        path = self._path(key)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(data)
            partial.replace(path)  # atomic: a reader sees the old or the new file
        except OSError as exc:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            raise HistoryError(f"{self.location(key)}: cannot write: {exc.strerror}") from None

    def children(self, key: str) -> list[str]:
        folder = self._path(key)
        try:
            return sorted(p.name for p in folder.iterdir() if p.is_dir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise HistoryError(f"{folder}: cannot list: {exc.strerror}") from None

    def location(self, key: str) -> str:
        return str(self._path(key))


def dir_store(path: str, base: Path) -> FolderStore:
    """Return the store in folder `path` (relative paths resolve against `base`)."""
    if not path.strip():
        raise HistoryError("dir: needs a folder, e.g. 'dir:.clawspec-history'")
    root = Path(path).expanduser()
    root = root if root.is_absolute() else base / root
    return FolderStore(DirBlobs(root, f"dir:{path}"))
