"""pydantic's plugin lookup, answered without `importlib.metadata` while plugins are disabled.

The first model pydantic builds imports `pydantic.plugin._loader`, and that module imports
`importlib.metadata` (and with it `email`, `zipfile`, `csv`, `socket`, …: about 5 % of
`clawspec validate`) only to look plugins up in the installed packages' entry points. The CLI
disables plugins (`PYDANTIC_DISABLE_PLUGINS`), so it installs this stand-in first: it gives
pydantic's own answer for disabled plugins, `()`, and hands over to the real loader as soon as
anything else is asked of it (plugins enabled by the user, or a name it does not define).
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

LOADER = "pydantic.plugin._loader"
_DISABLED_ALL = ("__all__", "1", "true")  # pydantic's values for "no plugin at all"


def install() -> None:
    """Stand in for pydantic's plugin loader, unless pydantic has imported it already."""
    if LOADER in sys.modules:
        return
    stand_in = types.ModuleType(LOADER, __doc__)
    stand_in.get_plugins = _get_plugins  # type: ignore[attr-defined]
    stand_in.__getattr__ = _real_attribute  # type: ignore[method-assign]
    sys.modules[LOADER] = stand_in


def _get_plugins() -> Any:
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _DISABLED_ALL:
        return ()
    return _real_loader().get_plugins()


def _real_attribute(name: str) -> Any:
    if name.startswith("__"):  # the import system probing a module (`__path__`, `__spec__`)
        raise AttributeError(f"module {LOADER!r} has no attribute {name!r}")
    return getattr(_real_loader(), name)


def _real_loader() -> types.ModuleType:
    """pydantic's loader, imported now; it replaces the stand-in for every later lookup."""
    current = sys.modules.get(LOADER)
    if current is not None and current.__dict__.get("get_plugins") is not _get_plugins:
        return current
    sys.modules.pop(LOADER, None)
    return importlib.import_module(LOADER)
