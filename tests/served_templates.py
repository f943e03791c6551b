"""What both engine plugins' tests serve beyond the built-ins: the template of transformers'
response-parsing docs and `transformers serve`'s Qwen3 fallback (from the engine's own
transformers), with one call to greet a user.

The docs' template is SmolLM3's shape, where the call is the JSON body itself (`"function":
"{content}"`): `cases_stream.SMOLLM`, the same dict the differential stream tests use.
"""

from __future__ import annotations

import pytest
from cases_stream import SMOLLM as DOCS_TEMPLATE

GREET_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "greet_user",
            "parameters": {"type": "object", "properties": {"greeting": {"type": "string"}}},
        },
    }
]
GREET_CALL = (
    "<tool_call>\n"
    '{"name": "greet_user", "arguments": {"greeting": "Hi there, how are you doing today?"}}'
    "\n</tool_call><|im_end|>"
)


def served_template(which: str) -> dict:
    """ "docs": the docs' template; "serve_qwen3": `transformers serve`'s Qwen3 fallback."""
    if which == "docs":
        return DOCS_TEMPLATE
    from transformers.cli.serving import utils

    for families, template in utils._RESPONSE_TEMPLATE_FALLBACKS.items():
        if "qwen3" in families:
            return template
    pytest.skip("this transformers has no transformers serve fallback for Qwen3")
