"""Regression over time: repeated attempts, comparison with a baseline, trends."""
