"""The default volatile parts of a model request (config `volatile_fields`, `volatile_patterns`).

Kept apart from `normalize.py` so that reading the settings does not import the normaliser.
"""

from __future__ import annotations

# Keys dropped anywhere in a request body (docs/gateway.md lists them; config `volatile_fields`).
DEFAULT_VOLATILE_FIELDS: tuple[str, ...] = (
    "id",  # tool-call ids in assistant messages (OpenAI), tool_use ids (Anthropic)
    "tool_call_id",  # tool results (OpenAI chat)
    "call_id",  # function calls and their outputs (OpenAI responses)
    "tool_use_id",  # tool results (Anthropic)
    "created",
    "user",
    "metadata",
    "prompt_cache_key",
    "safety_identifier",
    "previous_response_id",
)
# Text replaced by <volatile> in every string of a body (config `volatile_patterns`). Dates and
# times are not here: they are CLOCK_TEXT, which applies whatever this setting says.
DEFAULT_VOLATILE_PATTERNS: tuple[str, ...] = (
    # UUIDs: job ids, session keys, run ids
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    # Long hex ids: trace ids, ClawSpec run ids, random content ids
    r"\b[0-9a-f]{16,}\b",
    # Where OpenClaw is installed: its bundled skills are listed by absolute path
    r"/[^\s\"'<>|]*/node_modules/openclaw(?=/)",
    # The machine in the gateway's "Runtime:" line: host=vm | os=Linux 6.18 (x64) | node=v24
    r"\b(?:host|os|node|active_node|shell)=[^|\n]*",
)

# OpenClaw's project-memory instruction, added when the workspace is inside a git repository.
_PROJECT_MEMORY = (
    r"For every repository-specific memory entry you write, add <!-- project: [^\n]*? --> on "
    r"the same line\. Do not project-scope [^\n]*? specific to this repository\."
)
# Text removed from every string before the volatile patterns apply: what OpenClaw adds only in
# some environments, so that its presence, not only its value, differs between the recording and
# the replay (a cassette recorded on a developer's machine replays in a container, from a git
# clone: the example workflow). Not a setting: these are facts of OpenClaw's prompts.
ENVIRONMENT_TEXT: tuple[str, ...] = (
    # the `Runtime:` line's git root: `host=vm | repo=/github/workspace | os=…`
    r"\brepo=[^|\n]*\| ",
    # … and its shell, absent where SHELL is unset (a container): `… | shell=bash | channel=…`
    # (the space before the next field stays: the line reads the same as one without a shell)
    r" \| shell=[^|\n]*?(?= \||\n|$)",
    # OpenClaw's own bundled skills, listed only where the binaries they need are installed
    # (curl, tmux, …): the user's skills (in the workspace) stay and still have to match
    r"[ \t]*<skill>(?:(?!</skill>)[\s\S])*?<location>[^<]*/node_modules/openclaw/[^<]*"
    r"</location>\s*</skill>\n?",
    # the instruction as its section's only content: the section goes with it
    r"## (?:Subagent|Conversation) Context\n" + _PROJECT_MEMORY + r"\n(?=## |\Z)",
    # the instruction after (or before) other context: the instruction and the blank lines
    # before it go (a sub-agent's prompt has two or three, then its `## Runtime` line)
    r"\n+" + _PROJECT_MEMORY + r"(?=\n|\Z)",
    _PROJECT_MEMORY + r"\n\n",
)

# -- what the clock puts into OpenClaw's prompts -------------------------------------------------
# Every date, time, weekday, time zone and relative time OpenClaw formats into a prompt, in each of
# its formats (seen in openclaw@2026.9.6's formatters): replaced by <volatile> before the volatile
# patterns, and not a setting, so that a cassette replays on any day, at any hour, in any zone,
# even where a user's own `volatile_patterns` replace the defaults.
_WEEKDAY = r"(?:Mon|Tue(?:s)?|Wed(?:nes)?|Thu(?:rs)?|Fri|Sat(?:ur)?|Sun)(?:day)?"
MONTH = _MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
# A zone as Intl prints it: an IANA name (Europe/Berlin, America/Argentina/Buenos_Aires,
# Etc/GMT+3), an offset name (GMT+5:30, UTC-03:00), an abbreviation (UTC, EST, CEST, AEDT).
_ZONE = (
    r"(?:(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc|US"
    r"|Canada|Mexico|Brazil|Chile)"
    r"(?:/[A-Za-z0-9_+-]+)+|(?:GMT|UTC)(?:[+-]\d{1,2}(?::?\d{2})?)?|[A-Z]{2,4}T|UTC|GMT)"
)
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?[AaPp]\.?[Mm]\.?)?"
CLOCK_TEXT: tuple[str, ...] = (
    # ISO and envelope stamps, with the weekday before and the zone after: "[Wed 2026-11-25
    # 13:58 UTC]", "Wed 2026-11-25T13:58:05Z", "2026-11-25 14:58:05 GMT+1", "Current date:
    # 2026-11-25", "Reference UTC: 2026-11-25T13:58:05.123Z", "13:58:05.123+00:00" log stamps
    rf"(?:{_WEEKDAY},? )?\d{{4}}-\d{{2}}-\d{{2}}"
    rf"(?:[T ]{_CLOCK}(?:Z|[+-]\d{{2}}:?\d{{2}}| \(?{_ZONE}\)?)?)?",
    # spelled out: "Wednesday, November 25th, 2026 - 1:58 PM (UTC)", "… - 13:58 (Asia/Kolkata)"
    # (a day is one or two digits: "November 2026" is no day, a month and a year follow)
    rf"(?:{_WEEKDAY},? )?{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?(?!\d)(?:,? \d{{4}})?"
    rf"(?:,? (?:- |at )?{_CLOCK}(?: \(?{_ZONE}\)?)?)?",
    # a clock time with its zone or offset: "13:58 UTC", "1:58 PM", "13:58:05.123+00:00"
    rf"\b{_CLOCK}(?:Z\b|[+-]\d{{2}}:\d{{2}}| \(?{_ZONE}\)?)?",
    # the zone on its own line: "Time zone: Europe/Berlin"
    rf"(?<=Time zone: ){_ZONE}",
    # relative times: "5m ago", "in 3h", "just now", "in <1m", "2 hours ago", an envelope's "+5m"
    r"\b\d+ ?(?:s|m|h|d|w|mo|y|sec|min|second|minute|hour|day|week|month|year)s? ago\b",
    r"\bin (?:<1m|\d+[smhd])\b|\bjust now\b|(?<=\s)\+\d+[smhd]\b",
    # a weekday next to what the clock said: "Wednesday <volatile>" after the rest is replaced
    rf"\b{_WEEKDAY}\b(?=,? \d)",
    # how long a sub-agent ran, in the result OpenClaw announces to the conversation's session:
    # "Stats: runtime 3s • tokens 220"
    r"(?<=Stats: runtime )\d+(?:\.\d+)?(?:ms|s|m|h)\b",
)
