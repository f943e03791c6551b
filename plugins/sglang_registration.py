"""The `sglang.srt.plugins` entry point: chatparse's parser names in SGLang's registries.

SGLang runs general plugins (`load_plugins()`, filtered by `SGLANG_PLUGINS`) before it reads its
command line, whose `--tool-call-parser` choices are the keys of
`FunctionCallParser.ToolCallParserEnum` and whose `--reasoning-parser` choices are the keys of
`ReasoningParser.DetectorMap` (once that module is imported, as here): `register()` adds `chatparse`
and `chatparse-<family>` to both, each a class that knows its name (`ChatparseDetector`,
plugins/sglang_detectors.py; `ChatparseReasoningDetector`, plugins/sglang_reasoning.py).
"""

from __future__ import annotations


def register() -> None:
    """Add every chatparse parser name to SGLang's tool-call and reasoning parsers."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from .sglang_detectors import detector_for
    from .sglang_reasoning import reasoning_detector_for
    from .template_choice import parser_names

    for name in parser_names():
        FunctionCallParser.ToolCallParserEnum[name] = detector_for(name)
        ReasoningParser.DetectorMap[name] = reasoning_detector_for(name)
