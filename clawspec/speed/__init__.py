"""Speed and memory measures, kept beside the core so that the core reads plainly.

Each module says what it saves; README.md in this folder says where each is measured
(`benchmarks/`):

- `collector`: the cyclic garbage collector paused while long-lived objects are allocated;
- `frozen_model`: frozen pydantic models share their sets of field names;
- `pydantic_plugins`: pydantic's plugin look-up answered without `importlib.metadata`;
- `process_exit`: the command ends without Python's final teardown.
"""
