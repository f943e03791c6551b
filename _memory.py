"""The dict API: compile a template in memory, cache the module by template hash, run it.

A compiled module is executed from its source with the source registered in `linecache` under
`<chatparse generated sha256:...>`, so tracebacks show the generated lines (as attrs does for the
methods it generates).
"""

from __future__ import annotations

import _thread  # what `threading.Lock` is; `threading` itself costs a millisecond to import
import os
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


# The compiler's own packages: an extra (`pip install 'chatparse[compiler]'`), since generated
# modules and the serving layer need only `regex`.
COMPILER_PACKAGES = ("lark", "jinja2", "black")


def compiler_missing(exc: ModuleNotFoundError) -> ModuleNotFoundError:
    """The error for a template that needs compiling where the compiler's packages are absent."""
    if exc.name not in COMPILER_PACKAGES:
        return exc
    return ModuleNotFoundError(
        f"compiling a response template needs chatparse's compiler ({exc.name!r} is not "
        "installed): pip install 'chatparse[compiler]'. The built-in families "
        "(chatparse.generated) and modules written by compile-template need only regex.",
        name=exc.name,
    )


def compile_template(template: dict) -> str:
    """The source of the parser module for `template` (what `compile-template` writes)."""
    try:
        from .compiler import compile_template as _compile

        return _compile(template)  # (which imports black only when it formats)
    except ModuleNotFoundError as exc:
        raise compiler_missing(exc) from None


# The last module found for a source: (the source, what it was checked against, the module), by
# the source's id, or by its text for a string (a name or a path: a server may build the string
# anew per request, from its configuration or a parser name). A parser built per request from the
# same template dict, name, file or tokenizer finds its module here without re-serialising and
# hashing the template, or reading its file (which cost more than parsing a short turn). The
# entry holds the source, so its id cannot be reused.
_BY_SOURCE: dict[int | str, tuple[Any, Any, types.ModuleType]] = {}


def _source_key(source: Any) -> int | str:
    return source if type(source) is str else id(source)


def _fingerprint(source: Any) -> Any:
    """What must be unchanged for `source` to name the same template again, cheap to compare: a
    dict's deep copy (compared with `==`, about 0.5 µs for hermes), a path's file (`_file_state`;
    a model directory's tokenizer_config.json), None for a built-in name (no file of that name:
    the package's templates do not change), a module's or tokenizer's template (a copy)."""
    import copy  # only once a source is first seen: importing a generated module must not

    if isinstance(source, dict):
        return copy.deepcopy(source)
    if isinstance(source, (str, os.PathLike)):
        return _file_state(source)
    return copy.deepcopy(template_of(source))


def _file_state(path: Any) -> tuple[int, int, int, int] | None:
    """(device, inode, size, mtime) of the file a path source reads, None when there is none (a
    name): which file, as well as its state, since a relative path names another file from
    another working directory."""
    try:
        if os.path.isdir(path):
            path = os.path.join(path, "tokenizer_config.json")
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def _unchanged(source: Any, fingerprint: Any) -> bool:
    if isinstance(source, dict):
        return source == fingerprint
    if isinstance(source, (str, os.PathLike)):
        return _file_state(source) == fingerprint
    return template_of(source) == fingerprint


def load_module(template: Any) -> types.ModuleType:
    """The executed parser module for `template` (a dict, or any source `template_of` reads),
    compiled once per distinct template; a built-in family name loads its committed module
    (`chatparse.generated`), which is never compiled at run time."""
    key = _source_key(template)
    found = _BY_SOURCE.get(key)
    if (
        found is not None
        and (found[0] is template or type(template) is str)
        and _unchanged(template, found[1])
    ):
        return found[2]  # (an evicted module's entries went with it: see below)
    module = _load_module(template)
    if not isinstance(template, (int, float, bool)) and template is not None:
        try:
            fingerprint = _fingerprint(template)
        except RecursionError:
            return module  # a template nested past the recursion limit: found by its hash only
        with _LOCK:
            if len(_BY_SOURCE) >= _CACHE_LIMIT:
                _BY_SOURCE.pop(next(iter(_BY_SOURCE)))
            _BY_SOURCE[key] = (template, fingerprint, module)
    return module


def _committed(source: Any, template: Any) -> types.ModuleType | None:
    """The committed module of a built-in family `source` names, when built from `template`."""
    if not isinstance(source, str) or not source.isidentifier():
        return None
    from .catalogue import committed_module

    module = committed_module(source)
    if module is None or getattr(module, "TEMPLATE", None) != template:
        return None
    return module


def _load_module(source: Any) -> types.ModuleType:
    template = template_of(source)
    module = _committed(source, template)
    if module is not None:
        return module  # never the compiler (black, lark, jinja2) for a built-in name
    try:
        from .compiler.codegen.codemodel import template_sha256
    except ModuleNotFoundError as exc:
        raise compiler_missing(exc) from None

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
            linecache.cache.pop(evicted.__file__ or "", None)  # its source lines go with it
            for source_id in [i for i, entry in _BY_SOURCE.items() if entry[2] is evicted]:
                del _BY_SOURCE[source_id]  # and the sources that found it
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
