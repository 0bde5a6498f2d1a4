"""Reading what the user wrote, below everything that interprets it.

- `source`: YAML with the position of every key and value, safely (no tags, no alias bombs);
- `limits`: the size, depth and count limits every input is read within;
- `paths`: contract paths, resolved inside the workspace (never climbing out of it).

Configuration, contracts, assertions, migration and linting all read files through these
modules, so they import nothing of ClawSpec above `errors` and `secrets`.
"""
