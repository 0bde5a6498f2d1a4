"""Traces: one normalized span model, backends that map into it, and the run's trace lookup."""
