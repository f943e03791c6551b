"""The `sglang.srt.plugins` entry point: chatparse's parser names in SGLang's tool-call registry.

SGLang runs general plugins (`load_plugins()`, filtered by `SGLANG_PLUGINS`) before it reads its
command line, whose `--tool-call-parser` choices are the keys of
`FunctionCallParser.ToolCallParserEnum`: `register()` adds `chatparse` and `chatparse-<family>`
there, each a `ChatparseDetector` class (plugins/sglang_detectors.py) that knows its name.
"""

from __future__ import annotations


def register() -> None:
    """Add every chatparse parser name to SGLang's tool-call parsers."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    from .sglang_detectors import detector_for
    from .template_choice import parser_names

    for name in parser_names():
        FunctionCallParser.ToolCallParserEnum[name] = detector_for(name)
