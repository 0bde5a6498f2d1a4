"""Regression over time (issue 12): repeated attempts, comparison with a baseline, trends."""
