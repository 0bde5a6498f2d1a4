"""Speed and memory measures, kept beside the core so that the core reads plainly.

Each module says what it saves; README.md in this folder says where each is measured
(`benchmarks/`):

- `collector`: the cyclic garbage collector paused while long-lived objects are allocated;
- `process_exit`: the command ends without Python's final teardown.
"""
