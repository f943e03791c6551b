"""The runtime that generated parser modules stand on. It imports nothing from chatparse.compiler.

Generated modules import only the names below (and `chatparse.runtime.charclass` for the named
character classes); `check_abi` refuses a module compiled for another runtime ABI, the way
protobuf's generated code checks its runtime version.
"""

from __future__ import annotations

from . import content, transform
from .charclass import CharSet
from .delimiter import Delimiter
from .dfa import Row
from .stream import Field, Region, RegionParser, Watch

# The one definition of the ABI number (the compiler reads it from here). Bump it whenever a
# name, constructor or function that generated code calls changes how it may be called;
# tests/test_versions.py records each ABI's signatures and fails on a change without a bump.
# 3: Delimiter(groups_pattern=, groups_aliases=). 4: the fast-path hook (RegionParser docstring).
RUNTIME_ABI = 4


def check_abi(abi: int) -> None:
    """Called at import by every generated module with the ABI it was compiled for."""
    if abi != RUNTIME_ABI:
        raise ImportError(
            f"this parser module was generated for chatparse runtime ABI {abi}, but the installed "
            f"runtime has ABI {RUNTIME_ABI}; rebuild it with compile-template"
        )


__all__ = [
    "CharSet",
    "Delimiter",
    "Field",
    "RUNTIME_ABI",
    "Region",
    "RegionParser",
    "Row",
    "Watch",
    "check_abi",
    "content",
    "transform",
]
