"""Trace backends: each maps its API's answers into `clawspec.traces.model`."""
