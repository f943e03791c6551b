"""pytest at the repository root, which is the package `chatparse` itself (pyproject.toml maps it).

pytest collects this folder as a package and, before the first test, imports its `__init__.py`
under the folder's name to run any `setup_module` there. In a clone whose folder name is no
identifier (`chat-parse`) that import fails and every test errors. The tests import the installed
`chatparse`, and the root defines no setup: the root package is given none to run.
"""

from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items):
    for node in items[0].listchain() if items else ():
        if isinstance(node, pytest.Package) and Path(node.path).resolve() == _ROOT:
            node.setup = lambda: None  # type: ignore[method-assign]
