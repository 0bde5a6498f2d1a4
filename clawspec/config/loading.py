"""Settings: defaults < clawspec.yaml < CLAWSPEC_* environment < CLI flags.

Every option has one name everywhere: config `gateway_base_url`, environment
`CLAWSPEC_GATEWAY_BASE_URL`, flag `--gateway-base-url`. Nested options use `__` in the
environment (`CLAWSPEC_GATEWAY__MODE`). Secrets come only from the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from contextlib import suppress
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawspec.config.settings import DEFAULT_REPORT_DIR, MIB, Settings
from clawspec.config.variants import variant_problems
from clawspec.errors import ConfigError
from clawspec.inputs.source import DuplicateKeys, SourceDoc, SourceError, parse_yaml
from clawspec.secrets import MASKED_ENV, SECRET_ENV, register_settings
from clawspec.text import did_you_mean, flat

CONFIG_NAMES = ("clawspec.yaml", "clawspec.yml")
ENV_PREFIX = "CLAWSPEC_"
# The settings that hold a path (a file, a folder or a glob; `baseline` a SOURCE that may be
# one), by location: `load_settings` resolves them against the folder they are relative to
# (docs/guide.md "Configuration").
PATH_SETTINGS: tuple[tuple[str, ...], ...] = (
    ("report_dir",),
    ("report_json",),
    ("junit",),
    ("report_html",),
    ("codequality",),
    ("summary",),
    ("cassette_dir",),
    ("durations",),
    ("baseline",),
    ("plugin_output",),
    ("gateway_log_pattern",),
    ("openclaw_state_dir",),
    ("gateway", "config"),
)
# Those of them that their readers join to the workspace root when relative.
WORKSPACE_READ_PATHS = {
    ("cassette_dir",),
    ("plugin_output",),
    ("gateway_log_pattern",),
    ("openclaw_state_dir",),
    ("gateway", "config"),
}


def find_config(start: Path) -> Path | None:
    """Walk up from `start` (a file or folder) to the first clawspec.yaml. The walk follows the
    path as given, not where a link points: a contract linked into a workspace from elsewhere
    is that workspace's (its target's folders may hold another config, or none)."""
    absolute = Path(os.path.abspath(start))
    folder = absolute if absolute.is_dir() else absolute.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            if (candidate / name).is_file():
                return candidate / name
    return None


def locate_config(config: str | Path | None, start: Path) -> Path | None:
    """The config file of a command: `--config` when given (it must exist), else the
    clawspec.yaml found walking up from `start`, else None. Every command finds it this way."""
    if config:
        if not Path(config).is_file():
            raise ConfigError(f"--config: no such file '{config}'")
        return Path(config)
    return find_config(start)


def resolve_settings(
    config: str | Path | None,
    start: Path,
    environ: Mapping[str, str],
    flags: Mapping[str, Any] | None = None,
) -> tuple[Settings, Path | None]:
    """A command's settings, and the config file they were read from: `--config` or the file
    found from `start` (`locate_config`), then the environment, then the flags."""
    path = locate_config(config, start)
    return load_settings(path, environ, flags), path


def load_settings(
    config_path: Path | None,
    environ: Mapping[str, str],
    flags: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge the layers and validate once; raise ConfigError naming where a bad value came from."""
    doc = _read_file(config_path) if config_path else None
    # Keys stated twice are named together, with the file's other problems (the first value
    # of each is read): one run shows everything to fix.
    duplicates = doc.duplicates if doc else ()
    twice = [f"{config_path}:{d.mark.line}:{d.mark.column}: {d.message}" for d in duplicates]
    try:
        settings = _validated(doc, config_path, environ, flags)
    except ConfigError as exc:
        if not twice:
            raise
        raise ConfigError(_lines([*twice, str(exc)])) from None
    if twice:
        raise ConfigError(_lines(twice))
    # The one way secrets travel: from here on every output masks them (clawspec/secrets.py).
    register_settings(settings, environ)
    return settings


def _validated(
    doc: SourceDoc | None,
    config_path: Path | None,
    environ: Mapping[str, str],
    flags: Mapping[str, Any] | None,
) -> Settings:
    """The settings of the file's data (`doc`), the environment and the flags, merged."""
    file_data = dict(doc.data) if doc else {}
    if doc is not None:
        from clawspec.config_options import adopt_legacy_options

        file_data = adopt_legacy_options(doc, file_data)
    for name in SECRET_ENV:
        if name in file_data:
            file_data[name] = _secret_reference(name, file_data[name], environ, config_path)
    env_data = _from_environ(environ)
    merged = _deep_merge(_deep_merge(file_data, env_data), dict(flags or {}))
    for name, variables in SECRET_ENV.items():
        found = next((environ[v] for v in variables if environ.get(v)), None)
        if found and name not in merged:
            merged[name] = found
    # OpenClaw's own variable names the folder of a gateway started in this environment.
    if "openclaw_state_dir" not in merged and environ.get("OPENCLAW_STATE_DIR"):
        merged["openclaw_state_dir"] = env_data["openclaw_state_dir"] = environ[
            "OPENCLAW_STATE_DIR"
        ]
    merged["masked"] = [environ[name] for name in MASKED_ENV if environ.get(name)]
    named = merged.get("secret_env")
    if isinstance(named, str):  # CLAWSPEC_SECRET_ENV=A_VAR,B_*
        named = merged["secret_env"] = [n.strip() for n in named.split(",") if n.strip()]
    if isinstance(named, list) and named:
        patterns = [str(n) for n in named]
        merged["masked"] += [
            value
            for key, value in environ.items()
            if value and any(fnmatchcase(key, pattern) for pattern in patterns)
        ]
    workspace = _workspace_root(config_path, file_data, env_data, flags or {})
    if workspace is not None:
        merged["workspace"] = workspace
    # Each layer's relative paths are relative to where they were written: the file's to the
    # workspace root, the environment's and the flags' to the folder ClawSpec runs in. The
    # file's are rewritten here to mean the same from the current folder; a flag's stays as
    # typed (the process runs in that folder, and messages echo it), unless it is one that is
    # read against the workspace root later: those become absolute.
    for loc in PATH_SETTINGS:
        value = _lookup(merged, loc)
        if value is None:
            continue
        if _lookup(flags or {}, loc) is not None or _lookup(env_data, loc) is not None:
            if loc in WORKSPACE_READ_PATHS:
                _store(merged, loc, _anchored(loc, value, Path.cwd()))
        elif _has(file_data, loc):
            _store(merged, loc, _anchored(loc, value, workspace or Path.cwd()))
    if _has(file_data, ("variants",)):
        merged["variants"] = _variant_paths(merged["variants"], workspace or Path.cwd())
    if workspace is not None and "report_dir" not in merged:  # the default is the workspace's
        merged["report_dir"] = _from_here(workspace / DEFAULT_REPORT_DIR, absolute=False)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_lines(_explain(exc, doc, env_data, flags or {}))) from None
    problems = variant_problems(settings)
    if problems:
        raise ConfigError(_lines(_located(doc, loc, what) for loc, what in problems))
    return settings


def _variant_paths(variants: Any, base: Path) -> Any:
    """The file's variants with their `openclaw_state_dir` anchored as the run's is (relative
    to the workspace root, made absolute)."""
    if not isinstance(variants, list):
        return variants  # not a list: validation says so
    loc = ("openclaw_state_dir",)
    return [
        {**v, "openclaw_state_dir": _anchored(loc, v["openclaw_state_dir"], base)}
        if isinstance(v, dict) and v.get("openclaw_state_dir") is not None
        else v
        for v in variants
    ]


def _workspace_root(
    config_path: Path | None,
    file_data: Mapping[str, Any],
    env_data: Mapping[str, Any],
    flags: Mapping[str, Any],
) -> Path | None:
    """The workspace root: `--workspace` or CLAWSPEC_WORKSPACE (relative to the current folder),
    else the file's `workspace` (relative to the file's folder), else the file's folder; None
    without any of them (the current folder stands in)."""
    for layer, where in ((flags, "--workspace"), (env_data, "environment CLAWSPEC_WORKSPACE")):
        if layer.get("workspace") is not None:
            return _folder(Path(str(layer["workspace"])).expanduser().resolve(), where)
    if config_path is None:
        return None
    folder = config_path.resolve().parent
    given = file_data.get("workspace")
    if given is None:
        return folder
    return _folder((folder / Path(str(given)).expanduser()).resolve(), f"{config_path}: workspace")


def _folder(path: Path, where: str) -> Path:
    """`path`, a folder that exists: every contract path is read against the workspace root,
    and one that is not there made every file assertion fail for no visible reason."""
    if not path.is_dir():
        raise ConfigError(f"{where}: no such folder '{path}' (the workspace root)")
    return path


def _anchored(loc: tuple[str, ...], value: Any, base: Path) -> Any:
    """`value` (a path, or for `baseline` a SOURCE) relative to `base`, as a path that means
    the same from the current folder (`_from_here`)."""
    if not isinstance(value, str | Path) or str(value).strip() == "":
        return value  # not a path: validation says so, with where it came from
    text = str(value).strip()
    absolute = loc in WORKSPACE_READ_PATHS
    if loc == ("baseline",):
        if text.startswith("dir:"):
            return "dir:" + _from_here(base / Path(text[4:]).expanduser(), absolute)
        if text == "github" or text.startswith("s3:") or "://" in text:
            return value  # not a path (a malformed one is the store's error to explain)
    return _from_here(base / Path(text).expanduser(), absolute)


def _from_here(path: Path, absolute: bool) -> str:
    """`path` for a reader in the current folder: absolute, or (unless `absolute`: its readers
    join it to the workspace root) relative to the current folder when inside it, the short
    form messages then echo (`reports/junit.xml` from the workspace root)."""
    if not absolute:
        with suppress(ValueError):
            return Path(os.path.normpath(path)).relative_to(Path.cwd()).as_posix()
    return str(path)


def _lookup(data: Mapping[str, Any], loc: tuple[str, ...]) -> Any:
    for part in loc:
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def _store(data: dict[str, Any], loc: tuple[str, ...], value: Any) -> None:
    """Set `loc` in `data`, copying the nested sections on the way (the layers share them)."""
    for part in loc[:-1]:
        data[part] = dict(data[part])
        data = data[part]
    data[loc[-1]] = value


def _located(doc: SourceDoc | None, loc: tuple[Any, ...], what: str) -> str:
    """A problem with the file position of `loc` when the value came from the file."""
    if doc is None or not isinstance(doc.data, dict) or loc[0] not in doc.data:
        return what
    mark = doc.key_mark(loc)
    return f"{doc.path}:{mark.line}:{mark.column}: {what}"


# clawspec.yaml is read before any limit setting is known: its own ceiling is fixed (a real one
# is a few KB; a pull request could otherwise make every job read gigabytes).
CONFIG_MAX_BYTES = MIB


def _read_file(path: Path) -> SourceDoc:
    try:
        with path.open("rb") as handle:
            data = handle.read(CONFIG_MAX_BYTES + 1)
        if len(data) > CONFIG_MAX_BYTES:
            raise ConfigError(
                f"{path}:1:1: configuration file is over the limit of {CONFIG_MAX_BYTES:,} bytes"
            )
        doc = parse_yaml(data.decode("utf-8"), path)
    except DuplicateKeys as exc:  # load_settings names every one
        doc = exc.doc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    except SourceError as exc:
        raise ConfigError(f"{path}:{exc.mark.line}:{exc.mark.column}: {exc}") from None
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{path}:1:1: configuration must be a mapping")
    return doc


def _secret_reference(name: str, value: Any, environ: Mapping[str, str], path: Path | None) -> Any:
    """Allow `${VAR}` references to the environment in the file; refuse literal secrets."""
    match = re.fullmatch(r"\$\{(\w+)\}", str(value).strip())
    if not match:
        env = SECRET_ENV[name][0]
        raise ConfigError(
            f"{path}: '{name}' must not hold a literal secret; set {env} in the "
            f"environment, or write '{name}: ${{{env}}}'"
        )
    return environ.get(match.group(1)) or None


def _from_environ(environ: Mapping[str, str]) -> dict[str, Any]:
    """Read CLAWSPEC_* variables (secrets excluded: they have their own lookup)."""
    data: dict[str, Any] = {}
    secret_vars = {v for names in SECRET_ENV.values() for v in names}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key in secret_vars or value == "":
            continue
        parts = key[len(ENV_PREFIX) :].lower().split("__")
        if parts == ["variants"]:  # the variants to run (names); their definitions are files'
            data["selected_variants"] = _names(value)
            continue
        if parts[0] not in Settings.model_fields:
            continue  # CLAWSPEC_* variables of other tools or future versions are not ours
        target = data
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = _env_value(parts, value)
    return data


def _names(value: str) -> list[str]:
    """Names separated by commas or line breaks (an action input may use either)."""
    return [name.strip() for name in re.split(r"[,\n]", value) if name.strip()]


def _env_value(parts: list[str], value: str) -> Any:
    if parts in (["scenario_patterns"], ["volatile_fields"], ["changed", "run_all_on"]):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _lines(problems: Iterable[str]) -> str:
    """One line per problem: a key or a path in the file may hold a line break, which must not
    start a line of its own (a CI system reads a line starting `::error::` as a command)."""
    return "\n".join(flat(problem) for problem in problems)


def _closest_option(loc: tuple[Any, ...]) -> str:
    """` (did you mean 'report_dir'?)` for a misspelled option, at any depth it sits."""
    from pydantic import BaseModel

    model: Any = Settings
    for part in loc[:-1]:  # down to the section holding it
        field = model.model_fields.get(str(part)) if isinstance(model, type) else None
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        model = annotation
    return did_you_mean(str(loc[-1]), model.model_fields)


def _explain(
    exc: ValidationError, doc: SourceDoc | None, env_data: dict[str, Any], flags: Mapping[str, Any]
) -> list[str]:
    lines = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        # A mapping's key (a `lint.rules` rule id) is said where the key is written, under
        # the mapping's name; the message names the key.
        is_key = loc[-1:] == ("[key]",)
        loc = loc[:-1] if is_key else loc
        dotted = ".".join(map(str, loc[:-1] if is_key else loc))
        kind = err["type"]
        what = (
            f"unknown option '{dotted}'{_closest_option(loc)}"
            if kind == "extra_forbidden"
            else f"{dotted}: {err['msg'].removeprefix('Value error, ')}"
        )
        if kind not in ("extra_forbidden", "missing") and "input" in err and not is_key:
            shown = err["input"]
            what += "" if "found" in what or f"{shown!r}" in what else f", found {shown!r}"
        if loc and loc[0] in flags:
            # The budget's flags are its fields' names (--max-cost-usd), not --budget.
            flag = loc[1] if loc[0] == "budget" and len(loc) > 1 else loc[0]
            lines.append(f"--{str(flag).replace('_', '-')}: {what}")
        elif _has(env_data, loc):
            env = ENV_PREFIX + "__".join(map(str, loc)).upper()
            lines.append(f"environment {env}: {what}")
        elif doc is not None:
            mark = doc.key_mark(loc)
            lines.append(f"{doc.path}:{mark.line}:{mark.column}: {what}")
        else:
            lines.append(what)
    return lines


def _has(data: Any, loc: tuple[Any, ...]) -> bool:
    for part in loc:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True
