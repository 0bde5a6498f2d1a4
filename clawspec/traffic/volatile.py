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
# Text replaced by <volatile> in every string of a body (config `volatile_patterns`).
DEFAULT_VOLATILE_PATTERNS: tuple[str, ...] = (
    # UUIDs: job ids, session keys, run ids
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    # ISO dates with an optional time and zone: 2026-11-23, 2026-11-23 09:40, ...T09:40:01.5Z
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
    # Spelled-out dates and times: "Monday, November 23rd, 2026 - 9:39 AM"
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r"[a-z]* \d{1,2}(?:st|nd|rd|th)?,? \d{4}(?: - \d{1,2}:\d{2}(?: ?[AP]M)?)?",
    # Clock times: 09:40, 9:39 AM, 09:40:01
    r"\b\d{1,2}:\d{2}(?::\d{2})?(?: ?[AP]M)?\b",
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
    # … and its shell, absent where SHELL is unset (a container): `… | shell=bash`
    r" \| shell=[^|\n]*",
    # OpenClaw's own bundled skills, listed only where the binaries they need are installed
    # (curl, tmux, …): the user's skills (in the workspace) stay and still have to match
    r"[ \t]*<skill>(?:(?!</skill>)[\s\S])*?<location>[^<]*/node_modules/openclaw/[^<]*"
    r"</location>\s*</skill>\n?",
    # the instruction as its section's only content: the section goes with it
    r"## (?:Subagent|Conversation) Context\n" + _PROJECT_MEMORY + r"\n(?=## |\Z)",
    # the instruction after (or before) other context: only the instruction goes
    r"\n\n" + _PROJECT_MEMORY,
    _PROJECT_MEMORY + r"\n\n",
)
