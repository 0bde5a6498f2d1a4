"""Which commands a SKILL.md's shell blocks run, and which of them the skill really requires.

`bin-undeclared` asks for a `requires.bins` entry only for a command the skill needs on every
host it runs on. OpenClaw hides a skill whose `bins` are missing, so asking for too much hides
the skill for nothing. A command is not a plain requirement when:

- it is one of per-system alternatives: in a block under an OS heading or after an OS label
  ("macOS:", "On Linux, run:"), in a `# macOS` comment section, inside a shell `if`/`case` on
  `uname`/`$OSTYPE` (unless the skill's `os` list is that system alone);
- it is tested before use (`command -v x`, `which x`, `type x`, `hash x`): the skill copes;
- it is one of a fallback chain (`ufw status || nft list ruleset`) or of commands the prose
  joins with "or" (`ss` or `lsof`): together they are one `requires.anyBins` requirement;
- it is an installer on an install line (`npm install -g x`, `pip install x`, `brew install
  x` …) or a tool the skill installs itself (there, in prose "install `x`", or in the
  metadata's `install` entries);
- the paragraph before its block makes it conditional on itself ("When Tailscale is involved").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clawspec.lint.document import Document

SHELL_LANGUAGES = {"bash", "sh", "shell", "zsh", "console", "shell-session"}
# A command: at the start of the line or after a separator, past `sudo` and shell keywords.
COMMAND_START = re.compile(
    r"(\|\||&&|[|;]|\$\(|^)\s*(?:(?:sudo|then|else|elif|if|do|while|until|time|!)\s+)*"
    r"([A-Za-z][\w.+-]*)"
)
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
# A shell comment: `#` at the start of a word, to the end of the line (quotes removed first).
COMMENT = re.compile(r"(?:^|(?<=\s))#.*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)")
_TESTED = re.compile(
    r"(?<![-\w.])(?:command\s+-v|which|type(?:\s+-[pPt])?|hash)\s+([A-Za-z][\w.+-]*)"
)
_OS_TEST = re.compile(r"\buname\b|\bOSTYPE\b|\$\{?OS\b|\bsw_vers\b|/etc/os-release")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# `` `ss` on Linux or `lsof` on macOS ``, "either `a` or `b`": two commands offered as a choice.
_PROSE_OR = re.compile(r"`([^`\n]+)`[^`.;:\n]{0,40}?\bor\b[^`.;:\n]{0,30}?`([^`\n]+)`")
_PROSE_INSTALL = re.compile(
    r"\b[Ii]nstall(?:s|ed|ing)?\s+(?:it\s+|the\s+|a\s+)?(?:\w+\s+){0,2}?`([\w@./+-]+)`"
)
_CONDITIONAL = re.compile(r"^\s*(?:[-*]\s+)?(?:if|when|whenever|only if|optionally)\b", re.I)
# An install command: the installer, its subcommand, then the packages (flags skipped).
_INSTALLER = re.compile(
    r"^(?:sudo\s+)?(?P<tool>npm|pnpm|yarn|bun|pip3?|pipx|uv|brew|go|cargo|gem|apt-get|apt|dnf|"
    r"yum|apk|pacman)\b(?P<rest>.*)$"
)
_INSTALL_VERBS = {"i", "install", "add", "-S", "tool"}
OS_FAMILIES = {
    "darwin": re.compile(r"\bmac\s?os(?:\s?x)?\b|\bos\s?x\b|\bdarwin\b|\bmac\b", re.I),
    "linux": re.compile(r"\blinux\b|\bubuntu\b|\bdebian\b|\bfedora\b|\bcentos\b|\brhel\b", re.I),
    "win32": re.compile(r"\bwindows\b|\bwin32\b", re.I),
}
# A label or a phrase that makes what follows one system's: "macOS:", "On Linux", "(macOS)",
# "Linux only", "for Windows".
_OS_PHRASE = re.compile(
    r"^\W*(?:on\s+|for\s+)?[\w ]{1,20}\W*:?\W*$|\b(?:on|for|under|in)\s+\w|\(\w[\w ]*\)|\bonly\b",
    re.I,
)


def os_family(text: str) -> str | None:
    """The one system `text` is about ('darwin', 'linux', 'win32'), or None (none or several)."""
    found = [name for name, pattern in OS_FAMILIES.items() if pattern.search(text)]
    if len(found) != 1 or not _OS_PHRASE.search(text):
        return None
    return found[0]


@dataclass
class Use:
    """One command a shell block runs."""

    binary: str
    line: int
    column: int
    why_not_required: str | None = None  # os | tested | installer | conditional


@dataclass
class ShellFacts:
    """Commands run, alternatives, installed and tested tools of one document."""

    uses: list[Use] = field(default_factory=list)
    groups: list[set[str]] = field(default_factory=list)  # alternatives (anyBins candidates)
    installed: set[str] = field(default_factory=set)
    tested: set[str] = field(default_factory=set)


def package_binary(package: str) -> str:
    """The command a package usually installs: `@scope/name@1` → name, `x/y/cmd/z@v` → z."""
    name = re.split(r"[@=<>\[]", package.lstrip("@").split("/")[-1] if "/" in package else package)
    return name[0] if name and name[0] else package


def install_packages(code: str) -> tuple[str, list[str]] | None:
    """(installer, packages) when `code` is an install command, else None."""
    match = _INSTALLER.match(code.strip())
    if not match:
        return None
    words = match.group("rest").split()
    if not any(w in _INSTALL_VERBS for w in words[:4]):
        return None
    packages, skip_next = [], False
    for word in words:
        if skip_next:
            skip_next = False
        elif word in ("--prefix", "-C", "--target", "--root", "-t"):
            skip_next = True
        elif not word.startswith("-") and word not in _INSTALL_VERBS | {"global", "pip"}:
            if word in ("&&", "||", ";", "|"):
                break
            packages.append(package_binary(word))
    return match.group("tool"), packages


def _mark_group(groups: list[set[str]], names: set[str]) -> None:
    """Merge `names` into the alternatives groups (a union of overlapping groups)."""
    merged = set(names)
    for group in [g for g in groups if g & merged]:
        merged |= group
        groups.remove(group)
    groups.append(merged)


def _first_word(span: str) -> str:
    word = span.strip().split()[0] if span.strip() else ""
    return word if re.fullmatch(r"[A-Za-z][\w.+-]*", word) else ""


def _prose(facts: ShellFacts, line: str) -> None:
    for match in _PROSE_OR.finditer(line):
        names = {_first_word(match.group(1)), _first_word(match.group(2))} - {""}
        if len(names) == 2:
            _mark_group(facts.groups, names)
    for match in _PROSE_INSTALL.finditer(line):
        facts.installed.add(package_binary(match.group(1)))
    for span in _CODE_SPAN.findall(line):
        found = install_packages(span)
        if found:
            facts.installed.update(found[1])


@dataclass
class _Block:
    """State while reading one fenced shell block."""

    os: str | None  # the system the whole block is for
    conditional: set[str]  # tools the paragraph before it is conditional on
    comment_os: str | None = None
    heredoc: str | None = None
    os_depth: int = 0  # nesting of `if`/`case` on the system, inside which lines are per-OS


def analyse(doc: Document, skill_os: set[str]) -> ShellFacts:
    """Read the body once: prose for alternatives and installs, shell blocks for commands."""
    facts = ShellFacts()
    sections: list[tuple[int, str | None]] = []  # (heading level, its system)
    paragraph: list[str] = []
    block: _Block | None = None
    fence = ""
    for number, line in doc.body_lines:
        stripped = line.strip()
        if block is None and fence:  # a non-shell block: skip to its end
            fence = "" if stripped.startswith(fence) else fence
            continue
        if block is not None:
            if stripped.startswith(fence):
                block, fence = None, ""
            else:
                _code_line(facts, block, number, line, skill_os)
            continue
        opened = _FENCE.match(stripped)
        if opened:
            fence = opened.group(1)[0] * 3
            if opened.group(2).lower() in SHELL_LANGUAGES:
                os = os_family(paragraph[-1]) if paragraph else None
                for _, section_os in reversed(sections):
                    os = os or section_os
                conditional = set()
                if paragraph and _CONDITIONAL.match(paragraph[-1]):
                    conditional = {w.lower() for w in re.findall(r"[\w.+-]+", paragraph[-1])}
                block = _Block(os, conditional)
            paragraph = []
            continue
        heading = _HEADING.match(stripped)
        if heading:
            level = len(heading.group(1))
            sections = [s for s in sections if s[0] < level]
            sections.append((level, os_family(heading.group(2)) or None))
            paragraph = []
            continue
        if stripped:
            paragraph.append(stripped)
            _prose(facts, stripped)
        # a blank line keeps the paragraph: "macOS:" then a blank line then the block
    return facts


def _code_line(
    facts: ShellFacts, block: _Block, number: int, line: str, skill_os: set[str]
) -> None:
    text = line.strip().removeprefix("$ ")
    if block.heredoc is not None:  # a heredoc's lines are data, not commands
        block.heredoc = None if text == block.heredoc else block.heredoc
        return
    if text.startswith("#"):
        block.comment_os = os_family(text.lstrip("# ")) or (
            block.comment_os if not text.lstrip("# ") else None
        )
        return
    opened = HEREDOC.search(text)
    block.heredoc = opened.group(1) if opened else None
    code = COMMENT.sub("", QUOTED.sub("''", text))  # `cmd  # note; exits 1` runs cmd only
    words = code.split()
    opens = (
        bool(words) and words[0] in ("if", "case") and bool(block.os_depth or _OS_TEST.search(text))
    )
    closes = len(re.findall(r"(?:^|;)\s*(?:fi|esac)\b", code)) if block.os_depth or opens else 0
    inside = block.os_depth > 0 or opens
    block.os_depth = max(0, block.os_depth + int(opens) - closes)
    per_os = block.os or block.comment_os
    if per_os and skill_os == {per_os}:
        per_os = None  # the skill runs on that system only: its commands are requirements
    inline_os = bool(_OS_TEST.search(text) and "&&" in code)
    facts.tested.update(m.group(1) for m in _TESTED.finditer(code))
    install = install_packages(code)
    if install:
        facts.installed.update(install[1])
    chain: list[str] = []
    for match in COMMAND_START.finditer(code):
        separator, binary = match.group(1), match.group(2)
        if match.string[match.end() : match.end() + 1] == "=" or binary[0].isupper():
            continue
        why = None
        if per_os or inside or inline_os:
            why = "os"
        elif install and binary == install[0]:
            why = "installer"
        elif binary.lower() in block.conditional:
            why = "conditional"
        facts.uses.append(Use(binary, number, line.find(binary) + 1, why))
        if separator == "||" and chain:
            chain.append(binary)
        else:
            if len(set(chain)) > 1:
                _mark_group(facts.groups, set(chain))
            chain = [binary]
    if len(set(chain)) > 1:
        _mark_group(facts.groups, set(chain))
