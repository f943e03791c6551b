"""The recorded reference outcomes (tests/fixtures/reference_outcomes.json) are current.

Without the reference, the differential tests compare chatparse with this recording; these tests
check that it covers exactly the corpus, was made by the pinned reference, keeps types through
JSON, and (with the reference installed) still equals what the reference gives.
"""

from __future__ import annotations

import json
import re

from record_reference import record_case
from support import (
    ORACLE_VERSION,
    RECORD_COMMAND,
    REPO,
    _recording,
    corpus,
    corpus_case,
    decode,
    encode,
    needs_reference,
    recorded_entry,
    typed,
)


def test_recording_covers_exactly_the_corpus_and_each_case_as_it_is_now():
    recorded, cases = set(_recording()["cases"]), set(corpus())
    assert (
        recorded == cases
    ), f"missing {sorted(cases - recorded)}, unknown {sorted(recorded - cases)}; rerun {RECORD_COMMAND}"
    for key in sorted(cases):
        recorded_entry(key)  # asserts the input digest


def test_recording_was_made_by_the_pinned_reference():
    assert _recording()["transformers"] == ORACLE_VERSION


def test_the_oracle_is_installed_only_by_its_script():
    """The `test` extra leaves transformers out (a pin there would install another release, or
    fail on its dependencies); .ci/install-oracle installs it, from .ci/run and the README."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert not re.findall(r'^\s*"transformers\b', pyproject, flags=re.MULTILINE)
    assert ".ci/install-oracle python" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && .ci/install-oracle && python -m pytest" in readme


@needs_reference
def test_the_installed_reference_is_the_oracle():
    import transformers

    assert transformers.__version__ == ORACLE_VERSION, f"run .ci/install-oracle ({ORACLE_VERSION})"


def test_encoding_keeps_every_type_through_json():
    value = {
        "int": 1,
        "float": 1.0,
        "bool": True,
        "none": None,
        "zero": [0, 0.0, -0.0, False],
        "special": [float("inf"), float("-inf"), float("nan")],
        "big": 2**70,
        "text": "1",
        "tuple": (1, "a"),
        "$dollar": {1: "int key", "s": {}},
        "list": [[], {}, ()],
    }
    back = decode(json.loads(json.dumps(encode(value), allow_nan=False)))
    assert typed(back) == typed(value)
    assert repr(back["zero"][2]) == "-0.0"


@needs_reference
def test_recording_equals_the_live_reference():
    stale = []
    for key in sorted(corpus()):
        if record_case(*corpus_case(key)) != _recording()["cases"][key]:
            stale.append(key)
    assert not stale, f"the reference now gives other outcomes for {stale}; rerun {RECORD_COMMAND}"
