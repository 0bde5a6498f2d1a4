"""The folder name of a repeated scenario's attempt among a scenario's recordings: the
recordings read it, and the settings refuse a variant named like it (a variant's recordings sit
beside the attempts'). Imports nothing of ClawSpec's: the settings import it."""

from __future__ import annotations

import re
from pathlib import Path

# A repeated scenario's attempt records into `attempt-<n>/` under its folder (n from 1).
ATTEMPT_FOLDER = re.compile(r"attempt-\d+")


def is_attempt_folder(folder: Path) -> bool:
    return ATTEMPT_FOLDER.fullmatch(folder.name) is not None
