"""Every committed generated/<family>.py is byte-for-byte what the compiler emits for its template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatparse.compiler import compile_template

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))


def test_there_is_a_catalogue():
    assert len(FAMILIES) >= 25, FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_module_is_up_to_date(family):
    source = f"templates/{family}.json"
    out = f"generated/{family}.py"
    template = json.loads((ROOT / source).read_text(encoding="utf-8"))
    expected = compile_template(template, source_path=source, rebuild=f"compile-template {source} -o {out}")
    committed = ROOT / out
    assert committed.exists(), f"missing {out}; rebuild: compile-template {source} -o {out}"
    assert committed.read_text(encoding="utf-8") == expected, f"stale {out}; rebuild: compile-template {source} -o {out}"
