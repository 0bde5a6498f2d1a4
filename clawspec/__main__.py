"""`python -m clawspec` runs the CLI."""

from clawspec.cli import main

raise SystemExit(main())
