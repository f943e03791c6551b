"""chatparse: compile chat-model response templates into specialised parser modules.

The dict API below mirrors `transformers.utils.chat_parsing`; it compiles the template (cached by
its sha256), executes the generated module and runs it: the same code `compile-template` writes,
never a second interpreter.
"""

from __future__ import annotations

from ._memory import ResponseParser, compile_template, load_module, parse_response

__all__ = ["ResponseParser", "compile_template", "load_module", "parse_response"]
