"""Deferred imports for the runtime: importing a generated module should cost milliseconds.

`regex` takes about 8 ms to import, and most templates only need it at parse time (named groups,
the `regex` fallback, json dialect knobs, transforms), so it is imported on first use.
"""

from __future__ import annotations

import functools


@functools.cache
def regex_module():
    import regex

    return regex


@functools.cache
def compiled(pattern: str, flags: int = 0):
    """`regex.compile(pattern, flags)`, compiled once per process."""
    return regex_module().compile(pattern, flags)
