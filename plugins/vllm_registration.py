"""The `vllm.general_plugins` entry point: chatparse's parser names in vLLM's registries.

vLLM calls `register()` in every process before it parses its command line, so that
`--tool-call-parser chatparse` and `--reasoning-parser chatparse` (or `chatparse-<family>`, one
per built-in family) are accepted. Registration is lazy: only names go into vLLM's registries,
and `chatparse.plugins.vllm_parsers` (which imports vLLM's parser classes) is imported when a
server selects one of them.
"""

from __future__ import annotations

PARSERS_MODULE = "chatparse.plugins.vllm_parsers"


def tool_parser_class_name(parser_name: str) -> str:
    """The class `vllm_parsers` serves `parser_name` with, as a tool parser."""
    return "ToolParser_" + parser_name.replace("-", "_")


def reasoning_parser_class_name(parser_name: str) -> str:
    """The class `vllm_parsers` serves `parser_name` with, as a reasoning parser."""
    return "ReasoningParser_" + parser_name.replace("-", "_")


def register() -> None:
    """Register every chatparse parser name, lazily, with vLLM's tool and reasoning parsers."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    from .template_choice import parser_names

    for name in parser_names():
        ToolParserManager.register_lazy_module(name, PARSERS_MODULE, tool_parser_class_name(name))
        ReasoningParserManager.register_lazy_module(
            name, PARSERS_MODULE, reasoning_parser_class_name(name)
        )
