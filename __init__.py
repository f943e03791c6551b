"""chatparse: compile chat-model response templates into specialised parser modules.

The dict API below mirrors `transformers.utils.chat_parsing`; it compiles the template (cached by
its sha256), executes the generated module and runs it: the same code `compile-template` writes,
never a second interpreter.
"""

from __future__ import annotations

from ._memory import ResponseParser, compile_template, load_module, parse_response


def load_template(source):
    """The response template of `source`: a dict, a built-in family name, a template file, a
    tokenizer_config.json or a model directory, a generated module, or a tokenizer (its
    `response_template`, else `init_kwargs["response_template"]`) or a processor (its `.tokenizer`).
    Raises `chatparse.catalogue.TemplateSourceError` with a one-line reason."""
    from .catalogue import load_template as _load

    return _load(source)


__all__ = ["ResponseParser", "compile_template", "load_module", "load_template", "parse_response"]
