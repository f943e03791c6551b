"""Every committed generated/<family>.py is byte-for-byte what the compiler emits for its template."""

from __future__ import annotations

import pytest
from support import FAMILIES, REPO, builtin_template

from chatparse.compiler import compile_template


def test_there_is_a_catalogue():
    assert len(FAMILIES) >= 25, FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_module_is_up_to_date(family):
    source = f"templates/{family}.json"
    out = f"generated/{family}.py"
    template = builtin_template(family)
    expected = compile_template(
        template, source_path=source, rebuild=f"compile-template {source} -o {out}"
    )
    committed = REPO / out
    assert committed.exists(), f"missing {out}; rebuild: compile-template {source} -o {out}"
    assert (
        committed.read_text(encoding="utf-8") == expected
    ), f"stale {out}; rebuild: compile-template {source} -o {out}"
