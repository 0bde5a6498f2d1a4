"""Run history: stores of earlier reports, baseline choice, run sources."""
