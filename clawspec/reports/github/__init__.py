"""GitHub Actions outputs: job summary, annotations, step outputs and the PR comment.

`commands.py` owns the runner protocol (workflow commands, masks, summary and output files);
the other modules render from the one `RunReport` and hand their text to it.
"""
