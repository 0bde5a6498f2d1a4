"""The secrets registry: every value ClawSpec must never show, and the one mask for all output.

A gateway, judge or trace backend may echo a credential in an error body, and an agent may write
one into a file an assertion quotes; ClawSpec then cuts the text to fit a message, a table cell
or an annotation. A mask applied after the cut no longer recognises the part of a secret that
is left, so every cut goes through `cut` (or `cut_bytes`), which masks *first*, then cuts, then
masks what a cut may still leave: a prefix of a secret, `PREFIX_MIN` characters or longer, at
the end of the kept text counts as that secret. `mask` applies the same rule wherever a text
shows a cut (the `…` mark), so a text cut elsewhere (by a server, or by code that cut it before
it reached the report) loses the half-secret too. The report model masks every string that
enters it (reports/model.py), and every writer masks again with `text.clean`.

What the registry holds (values shorter than `MIN_LENGTH` are never registered: a three-letter
"secret" would mask ordinary words everywhere):
- every configured credential: the hook token, the gateway token, the GitHub token, the judge's
  and the trace backends' keys, AWS keys (`SECRET_ENV`, `MASKED_ENV`), the tokens
  a brought-up gateway was given, the credentials the judge client resolved, and the ones in
  the user's openclaw.json a gateway is brought up with (`config_credentials`);
- every `${VAR}` value the configuration interpolates (they become the secret settings);
- every environment variable whose NAME marks it as secret (`*_KEY`, `*_TOKEN`, `*_SECRET`,
  `*_PASSWORD`, `*_CREDENTIALS`, or a name/pattern listed in the `secret_env` setting) that a
  contract references as `{{env.NAME}}`; the variables `secret_env` names are registered
  whenever they are set;
- for each value, how it looks inside JSON text and percent-encoded in a URL.
Patterns are masked wherever they appear, registered or not: AWS access key ids
(`AKIA…`/`ASIA…`) and the values of SigV4 `Credential=`, `Signature=` and
`X-Amz-Security-Token=` (an echoed `Authorization` header or presigned URL).

The registry is the one way secrets travel: nothing passes secret values to a writer, every output
masks through `mask` / `cut` (or `text.clean`), and a value that must be masked is registered
where ClawSpec learns it (the settings when they are resolved, a bring-up's tokens when they are
made, the judge's credentials when they are resolved, a key the model traffic proxy sees).
One registry is active per command (`scope`): the CLI opens it before its first line of output;
the Python API's `run` and `merge` open one, and `finish`, `publish` and `save_baseline` open one
from their settings (`settings_scope`) when none is active. Outside a scope only the patterns are
masked, so library code and tests never share values by accident.
On GitHub Actions the registry announces each value with `::add-mask::` (`announce`), the ones
found later (bring-up tokens, resolved AWS credentials) as soon as they are registered.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, TextIO

from clawspec.nested import strings_in

# Credentials ClawSpec never reads into settings but must still mask in every output: the judge's
# and the trace backends' keys, which their SDKs / clients read from the environment themselves.
MASKED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "OPIK_API_KEY",
    "LANGFUSE_SECRET_KEY",
    "LANGFUSE_PUBLIC_KEY",
    "PHOENIX_API_KEY",
)
# Secret settings and the environment variables they are read from, in order.
SECRET_ENV = {
    "hooks_token": ("CLAWSPEC_HOOKS_TOKEN", "OPENCLAW_HOOKS_TOKEN", "HOOKS_TOKEN"),
    "gateway_auth_token": ("CLAWSPEC_GATEWAY_AUTH_TOKEN", "OPENCLAW_GATEWAY_TOKEN"),
    "github_token": ("CLAWSPEC_GITHUB_TOKEN", "GITHUB_TOKEN"),
}

MASK = "***"  # as GitHub masks
MIN_LENGTH = 4  # shorter values would mask ordinary words
CUT_MARK = "…"  # what every cut text ends with
# A cut that leaves at least this many leading characters of a secret leaves that secret masked;
# a shorter prefix stays (three characters of a token are also the start of ordinary words).
PREFIX_MIN = 8
SECRET_NAME_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS")

# AWS access key ids, and the values of SigV4 parameters: an error body that echoes the request's
# `Authorization: AWS4-HMAC-SHA256 Credential=AKIA…/20261125/us-east-1/bedrock/aws4_request,
# SignedHeaders=…, Signature=…` or a presigned URL (`X-Amz-Credential=…&X-Amz-Signature=…`).
_PATTERN = re.compile(
    r"(?P<keep>(?i:credential|signature|security-token)=)[^\s,;\"'&<>\\]+"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
)
_HINT = re.compile(r"AKIA|ASIA|(?i:credential|signature|security-token)=")
# an AWS access key id cut short (the whole one is a `_PATTERN`), at the end of a cut text
_CUT_KEY_ID = re.compile(rf"(?:AKIA|ASIA)[A-Z0-9]{{{PREFIX_MIN - 4},15}}\Z")


# (value, the CI system's command that masks it) for the values to announce
MaskCommands = Callable[[Iterable[str]], list[tuple[str, str]]]


class SecretRegistry:
    """The values to mask in one command, longest first; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}  # insertion-ordered set
        self._ordered: tuple[str, ...] = ()
        self._names: tuple[str, ...] = ()
        self._announced: set[str] = set()
        self._stream: TextIO | None = None
        self._commands: MaskCommands | None = None

    def add(self, *values: str | None) -> list[str]:
        """Register each value (and its JSON / URL spellings); return the ones that are new."""
        new: list[str] = []
        with self._lock:
            for value in values:
                for variant in _variants(value):
                    if variant not in self._values:
                        self._values[variant] = None
                        new.append(variant)
            if new:
                self._ordered = tuple(sorted(self._values, key=len, reverse=True))
            stream, commands = self._stream, self._commands
        if new and stream is not None and commands is not None:
            self.announce(stream, commands)
        return new

    def add_names(self, *patterns: str) -> None:
        """Treat environment variables matching these names (fnmatch patterns) as secret."""
        with self._lock:
            self._names = tuple(dict.fromkeys((*self._names, *(p for p in patterns if p))))

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def values(self) -> tuple[str, ...]:
        """Every registered value, longest first."""
        return self._ordered

    def in_order(self) -> tuple[str, ...]:
        """Every registered value in the order registered (each value before its spellings)."""
        with self._lock:
            return tuple(self._values)

    def is_secret_name(self, name: str) -> bool:
        """True for `*_KEY`, `*_TOKEN`, …, and for the names added with `add_names`."""
        return is_secret_name(name) or any(fnmatchcase(name, p) for p in self._names)

    def add_environment(self, environ: Mapping[str, str]) -> None:
        """Register the known credential variables, those the added names match and the
        password of every URL a variable holds (a gateway's, a proxy's)."""
        self.add(*credential_values(environ), *url_passwords(*environ.values()))
        if self._names:
            self.add(
                *(v for k, v in environ.items() if any(fnmatchcase(k, p) for p in self._names))
            )

    def announce(self, stream: TextIO, commands: MaskCommands) -> None:
        """Ask the CI system to mask every value not announced yet, and keep announcing new ones.

        `commands` gives the CI system's mask command per value (on GitHub Actions
        `reports.github.commands.add_mask_commands`: `::add-mask::…` on stdout). Values are
        announced as they are registered, so the runner masks a value before ClawSpec prints
        anything that could hold it.
        """
        with self._lock:
            self._stream, self._commands = stream, commands
            fresh = [(v, line) for v, line in commands(self._values) if v not in self._announced]
            self._announced.update(v for v, _ in fresh)
            if fresh:
                stream.write("".join(line + "\n" for _, line in fresh))
                stream.flush()

    def announced_on(self, stream: TextIO | None, value: str) -> bool:
        """True when `value` was already announced on this very stream."""
        return stream is not None and stream is self._stream and value in self._announced


def is_secret_name(name: str) -> bool:
    """The built-in name rule: `*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_CREDENTIALS`
    (case-insensitive; the bare words count too)."""
    upper = name.upper()
    return any(upper.endswith(s) or upper == s[1:] for s in SECRET_NAME_SUFFIXES)


def credential_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the credential variables ClawSpec knows (SECRET_ENV, MASKED_ENV)."""
    names = [*MASKED_ENV, *(name for names in SECRET_ENV.values() for name in names)]
    found = [environ[name] for name in names if environ.get(name)]
    public, secret = environ.get("LANGFUSE_PUBLIC_KEY"), environ.get("LANGFUSE_SECRET_KEY")
    if public and secret:  # as it travels in an echoed `Authorization: Basic …` header
        import base64

        found.append(base64.b64encode(f"{public}:{secret}".encode()).decode())
    return found


# The password of a URL's user information (`scheme://user:password@host`): it travels in the
# URL wherever the URL is printed (a report's gateway URL, an error naming the request).
_URL_PASSWORD = re.compile(r"[A-Za-z][\w+.-]*://[^/?#@\s:]*:([^/?#@\s]+)@")


def url_passwords(*texts: object) -> list[str]:
    """The passwords written in URLs inside `texts` (as written and percent-decoded)."""
    from urllib.parse import unquote

    found: list[str] = []
    for text in texts:
        if isinstance(text, str) and "@" in text and "://" in text:
            for match in _URL_PASSWORD.finditer(text):
                found += [match.group(1), unquote(match.group(1))]
    return found


_URI_COMPONENT_SAFE = "-_.!~*'()"  # what JavaScript's encodeURIComponent leaves as it is
_PERCENT_HEX = re.compile(r"%[0-9A-F]{2}")


def _variants(value: str | None) -> list[str]:
    """The value, each of its lines, and how they look JSON-escaped or percent-encoded."""
    if not value or len(value.strip()) < MIN_LENGTH:
        return []
    import json
    from urllib.parse import quote, quote_plus

    found: dict[str, None] = {}
    lines = [line.strip() for line in value.splitlines()]
    for text in (value, *(line for line in lines if len(line) >= MIN_LENGTH)):
        encoded = [
            quote(text, safe=""),
            quote_plus(text, safe=""),
            quote(text),  # Python's default keeps `/`
            quote(text, safe=_URI_COMPONENT_SAFE),  # JavaScript's encodeURIComponent (Node)
        ]
        # Percent-encoding's hex digits may be written in either case (RFC 3986 §2.1).
        encoded += [_PERCENT_HEX.sub(lambda m: m.group().lower(), e) for e in encoded]
        for variant in (
            text,
            json.dumps(text, ensure_ascii=False)[1:-1],
            json.dumps(text)[1:-1],
            *encoded,
        ):
            found[variant] = None
    return list(found)


# -- the active registry -------------------------------------------------------------------------
_active: SecretRegistry | None = None
_active_lock = threading.Lock()


def active() -> SecretRegistry | None:
    """The registry of the command running now (None outside `scope`)."""
    return _active


@contextmanager
def scope(environ: Mapping[str, str] | None = None) -> Iterator[SecretRegistry]:
    """Use the active registry, or make one for this block (forgotten when the block ends).

    `environ`'s known credential variables are registered either way.
    """
    global _active
    with _active_lock:
        registry, opened = (_active, False) if _active is not None else (SecretRegistry(), True)
        _active = registry
    try:
        if environ is not None:
            registry.add_environment(environ)
        yield registry
    finally:
        if opened:
            with _active_lock:
                _active = None


def scoped(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run `function` inside `scope(environ=its environ argument, else os.environ)`."""
    import functools
    import os

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        environ = kwargs.get("environ")
        with scope(os.environ if environ is None else environ):
            return function(*args, **kwargs)

    return wrapper


def register(*values: str | None) -> None:
    """Add values to the active registry (nothing happens outside a scope)."""
    registry = _active
    if registry is not None:
        registry.add(*values)


def register_env(name: str, environ: Mapping[str, str]) -> None:
    """Register `environ[name]` when the name marks it as secret (a `{{env.NAME}}` reference)."""
    registry = _active
    if registry is not None and environ.get(name) and registry.is_secret_name(name):
        registry.add(environ[name])


# Keys of an OpenClaw config (camelCase) whose string values are credentials: a provider's
# `apiKey`, a channel's `botToken`, an `appSecret`, a `password`. A bare `key` or a `sessionKey`
# names something else.
_CONFIG_CREDENTIAL = re.compile(
    r"(?:api_?key|access_?key|private_?key|secret_?key|token|secret|password)$", re.I
)
_CONFIG_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def config_credentials(data: Any, environ: Mapping[str, str]) -> list[str]:
    """The credentials written in an OpenClaw config (the user's openclaw.json in bring-up
    mode): every string under a credential key, or the variable's value where it is a
    `${NAME}` reference, which OpenClaw substitutes from its environment."""
    found: list[str] = []
    todo = [data]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str) and _CONFIG_CREDENTIAL.search(str(key)):
                    reference = _CONFIG_REFERENCE.match(value.strip())
                    found.append(environ.get(reference.group(1), "") if reference else value)
                else:
                    todo.append(value)
        elif isinstance(node, list):
            todo.extend(node)
    return [value for value in found if value]


def register_settings(settings: Any, environ: Mapping[str, str]) -> None:
    """Register the secrets of resolved settings: the secret settings (a `${VAR}` value of the
    file included), the known credential variables and the `secret_env` names and values.
    `load_settings` (clawspec/config) calls it: a command's settings are masked once resolved."""
    registry = _active
    if registry is None:
        return
    registry.add_names(*getattr(settings, "secret_env", ()))
    found = (settings.hooks_token, settings.gateway_auth_token, settings.github_token)
    registry.add(*(s.get_secret_value() for s in (*found, *settings.masked) if s))
    dump = getattr(settings, "model_dump", None)
    if dump is not None:
        registry.add(*url_passwords(*strings_in(dump(mode="json"))))
    registry.add_environment(environ)


@contextmanager
def settings_scope(
    settings: Any, environ: Mapping[str, str] | None = None
) -> Iterator[SecretRegistry]:
    """The active registry (or one for this block) with `settings`' secrets registered: what a
    library entry point that writes output opens, so masking never depends on its caller."""
    with scope(environ) as registry:
        register_settings(settings, environ or {})
        yield registry


def registered() -> tuple[str, ...]:
    """The active registry's values, longest first (empty outside a scope)."""
    registry = _active
    return registry.values() if registry is not None else ()


# -- masking -------------------------------------------------------------------------------------
def mask(text: str) -> str:
    """Replace every registered secret and every pattern with `***`.

    Longest first, so a secret that contains another is masked whole. Returns `text` itself
    when there is nothing to mask.
    """
    ordered = registered()
    for secret in ordered:
        if secret in text:
            text = text.replace(secret, MASK)
    if _may_match(text):
        text = _PATTERN.sub(_masked_match, text)
    if CUT_MARK in text:  # a text cut before it got here: what precedes each mark
        parts = text.split(CUT_MARK)
        parts[:-1] = [_mask_dangling(part, ordered) for part in parts[:-1]]
        text = CUT_MARK.join(parts)
    return text


def cut(text: str, limit: int, *, mark: str = CUT_MARK) -> str:
    """`text` masked, then cut to at most `limit` characters (the last being `mark`).

    The one way ClawSpec shortens a text for output. Masking comes first, since a secret cut
    in two is no longer found; a secret's prefix the cut leaves at the end (`PREFIX_MIN`
    characters or more: the text held only that much of it) is masked as the secret.
    """
    masked = mask(text)
    if len(masked) <= limit:
        return masked
    if limit < len(mark):
        return mark[: max(limit, 0)]
    return _mask_dangling(masked[: limit - len(mark)], registered()) + mark


def cut_bytes(text: str, limit: int, *, mark: str = CUT_MARK) -> str:
    """`cut` for a limit in UTF-8 bytes (`mark` included); never splits a character."""
    masked = mask(text)
    data = masked.encode("utf-8")
    if len(data) <= limit:
        return masked
    room = limit - len(mark.encode("utf-8"))
    if room < 0:
        return ""
    kept = data[:room].decode("utf-8", "ignore")
    return _mask_dangling(kept, registered()) + mark


def _mask_dangling(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with a secret's prefix of `PREFIX_MIN` or more characters at its end masked (the
    earliest-starting one, so the longest goes), and a cut AWS access key id too."""
    if len(text) < PREFIX_MIN:
        return text
    start = len(text)
    heads, by_head, longest = _heads(secrets)
    if heads is not None:  # each place where a secret's first characters occur near the end
        found = heads.search(text, max(len(text) - longest, 0))
        while found is not None:
            rest = text[found.start() :]
            if any(secret.startswith(rest) for secret in by_head[found.group()]):
                start = found.start()
                break
            found = heads.search(text, found.start() + 1)
    if "AKIA" in text or "ASIA" in text:
        key_id = _CUT_KEY_ID.search(text, max(len(text) - 19, 0))
        if key_id is not None:
            start = min(start, key_id.start())
    return text if start == len(text) else text[:start] + MASK


def _may_match(text: str) -> bool:
    # Substring tests first: the regex over every string of a large report costs more.
    return ("=" in text or "AKIA" in text or "ASIA" in text) and _HINT.search(text) is not None


def needs_mask(text: str) -> bool:
    """True when `mask` would change `text` (registered values and patterns only)."""
    values = registered()
    if any(secret in text for secret in values):
        return True
    if CUT_MARK in text and any(
        _mask_dangling(part, values) != part for part in text.split(CUT_MARK)[:-1]
    ):
        return True
    return _may_match(text) and _PATTERN.search(text) is not None


def _masked_match(match: re.Match[str]) -> str:
    return (match.group("keep") or "") + MASK


@lru_cache(maxsize=32)
def _heads(
    secrets: tuple[str, ...],
) -> tuple[re.Pattern[str] | None, dict[str, list[str]], int]:
    """One pattern for the first `PREFIX_MIN` characters of every secret longer than that, the
    secrets by those characters, and the longest one's length (how far back a prefix starts)."""
    by_head: dict[str, list[str]] = {}
    for secret in secrets:
        if len(secret) > PREFIX_MIN:
            by_head.setdefault(secret[:PREFIX_MIN], []).append(secret)
    if not by_head:
        return None, by_head, 0
    pattern = re.compile("|".join(map(re.escape, by_head)))
    return pattern, by_head, max(len(s) for group in by_head.values() for s in group)


def masking_formatter(fmt: str) -> Any:
    """A `logging.Formatter` whose every formatted record (traceback included) is masked: the
    `--debug` log shows request details of every HTTP library ClawSpec uses."""
    import logging

    class MaskingFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return mask(super().format(record))

    return MaskingFormatter(fmt)
