"""`clawspec run --dry-run`: what a run would do, printed instead of done (`plan`: each
scenario's rendered steps; `spend`: the budget and the baseline's expected spend)."""
