"""The `clawspec` commands, one module each: `NAME`, `add_parser(commands)`, `run(args)`.

`clawspec/cli.py` only parses and dispatches. Every module here imports argparse and little else
at module level (all of them load for `clawspec --help`); a command's handler imports what it
needs when it runs, so each command pays only for itself (tests/test_startup.py).
"""

from __future__ import annotations

from clawspec.commands import (
    bless,
    cassettes,
    coverage,
    docs,
    doctor,
    history,
    init,
    lint,
    merge,
    migrate,
    run,
    schema,
    validate,
)

# In the order `clawspec --help` lists them.
ALL = (
    validate,
    run,
    merge,
    schema,
    lint,
    init,
    migrate,
    coverage,
    bless,
    history,
    cassettes,
    doctor,
    docs,
)
