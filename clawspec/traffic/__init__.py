"""Hermetic runs: record the agent's model traffic once, replay it in PR runs.

`proxy.py` sits between the gateway and the model provider; `cassette.py` stores one JSON file
per model call; `normalize.py` and `diff.py` decide which recording answers a request in replay;
`attribution.py` tells which scenario a request belongs to; `session.py` ties it to a run.
"""
