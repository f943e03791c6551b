"""The dict API: compile a template in memory, cache the module by template hash, run it.

A compiled module is executed from its source with the source registered in `linecache` under
`<chatparse generated sha256:...>`, so tracebacks show the generated lines (as attrs does for the
methods it generates).
"""

from __future__ import annotations

import _thread  # what `threading.Lock` is; `threading` itself costs a millisecond to import
import types

TYPE_CHECKING = False  # `typing` costs milliseconds at import; annotations are strings here
if TYPE_CHECKING:
    from typing import Any

_CACHE: dict[str, types.ModuleType] = {}
_LOCK = _thread.allocate_lock()
_CACHE_LIMIT = 256


def template_of(source: Any) -> Any:
    """The template dict behind `source`: a dict as is; a built-in family name, a path, a generated
    module or a tokenizer through `catalogue.load_template`. Anything else goes on unchanged, so
    the compiler raises the reference's error for it ("response_template must be a dict, got int").
    """
    if isinstance(source, dict):
        return source
    from .catalogue import TemplateSourceError, load_template, names_a_template

    if not names_a_template(source):
        return source

    try:
        return load_template(source)
    except TemplateSourceError as exc:
        # The reference's class and words, then why this source names no template.
        raise ValueError(
            f"response_template must be a dict, got {type(source).__name__}: {exc}"
        ) from None


def compile_template(template: dict) -> str:
    """The source of the parser module for `template` (what `compile-template` writes)."""
    from .compiler import compile_template as _compile

    return _compile(template)


def load_module(template: Any) -> types.ModuleType:
    """The executed parser module for `template` (a dict, or any source `template_of` reads),
    compiled once per distinct template."""
    from .compiler.codemodel import template_sha256

    template = template_of(template)
    if not isinstance(template, dict):
        compile_template(template)  # raises the reference's error for a non-dict template
    key = template_sha256(template)
    module = _CACHE.get(key)
    if module is not None:
        return module
    source = compile_template(template)
    filename = f"<chatparse generated sha256:{key}>"
    module = types.ModuleType(f"chatparse.generated._memory_{key[:16]}")
    module.__file__ = filename
    import linecache  # only when compiling: generated modules import chatparse, not linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), module.__dict__)
    with _LOCK:
        if len(_CACHE) >= _CACHE_LIMIT:
            evicted = _CACHE.pop(next(iter(_CACHE)))
            linecache.cache.pop(evicted.__file__, None)  # its source lines go with it
        _CACHE[key] = module
    return module


def parse_response(
    text: str,
    template: Any,
    *,
    prefix: str | None = None,
    tools: list | None = None,
    malformed: str = "raise",
    tokenizer: Any = None,
) -> dict:
    """Parse a complete model output into a message dict (the reference's `parse_response`).

    `malformed="event"` is the lenient mode (not in the reference): a structured region whose value
    does not parse is left out of the message instead of raising.
    """
    parser = load_module(template).ResponseParser
    if tokenizer is not None:  # `text` and `prefix` are token ids (transformers 5.25)
        return parser.parse(
            text, prefix=prefix, tools=tools, malformed=malformed, tokenizer=tokenizer
        )
    if malformed == "raise":
        return parser.parse(text, prefix=prefix, tools=tools)
    return parser.parse(text, prefix=prefix, tools=tools, malformed=malformed)


class ResponseParser:
    """Streaming parser for `template`: `initial_events`, `feed(chunk)`, `finalize()`.

    Constructing it returns an instance of the generated module's `ResponseParser`. With
    `malformed="event"` (lenient mode, not in the reference) a structured region whose value does
    not parse gives a `region_malformed` event (`field`, `error`, the raw `text`) instead of raising
    out of `feed`/`finalize`, and parsing goes on. With `captures=True` (not in the reference)
    each `region_open` of an explicit field carries `captures`, the open's named groups. With
    `offsets=True` (not in the reference; as transformers' main branch) open, close and malformed
    events carry `start` and `end`: the span of the input text (the prefix from its start anchor
    on, then the output) that the event consumed, its delimiter's match, empty at an implicit
    boundary.
    """

    def __new__(
        cls,
        template: Any,
        prefix: str | None = None,
        *,
        tools: list | None = None,
        malformed: str = "raise",
        captures: bool = False,
        offsets: bool = False,
        tokenizer: Any = None,
    ) -> Any:
        # With `tokenizer`, `prefix` and `feed` take token ids (transformers 5.25).
        options = {"tokenizer": tokenizer} if tokenizer is not None else {}
        return load_module(template).ResponseParser(
            prefix, tools=tools, malformed=malformed, captures=captures, offsets=offsets, **options
        )
