"""ModuleModel -> Python source: jinja2 renders, black formats.

In: a `ModuleModel`. Out: the module's source text. Guarantee: template strings reach the source
only through the `py` filter (a Python literal printed by `py_literal`) or the `comment` filter
(`comment_text`: one escaped line that can neither end a comment or a docstring nor switch on a
tool's pragma), so no field name, literal, pattern, default or transform can change what the
module does; and the same model always renders to the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path

import black
import jinja2

from ..limits import FORMAT_MAX_CHARS
from ..nested import Ref
from .codemodel import ModuleModel

_BLACK_MODE = black.Mode(line_length=100, target_versions={black.TargetVersion.PY310})


def py_literal(value: object) -> str:
    """A Python expression that evaluates to `value` (JSON-like data only; a `Ref` prints as the
    name of the part it stands for)."""
    if isinstance(value, Ref):
        return value.name
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(float(value))
    if isinstance(value, str):
        return _raw_literal(str(value)) or repr(str(value))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(py_literal(v) + ", " for v in value) + ")"
    raise TypeError(f"cannot compile a template value of type {type(value).__name__}: {value!r}")


def _raw_literal(text: str) -> str | None:
    """`r"..."` for a pattern-like string, which reads as it is written in the template
    (`r"\\s*<tool_call>"`, not `"\\\\s*<tool_call>"`), or None when a raw literal cannot hold
    it exactly: no backslash to save, a double quote, a char that is not printable (a newline,
    say), or an odd run of backslashes at the end (it would escape the closing quote)."""
    if "\\" not in text or '"' in text or not text.isprintable():
        return None
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return None
    trailing = len(text) - len(text.rstrip("\\"))
    if trailing % 2:
        return None
    return f'r"{text}"'


def comment_text(text: object) -> str:
    r"""The one filter for template text in a comment or a docstring: one printable line, safe
    both after `#` and inside a raw triple-quoted docstring, whatever the text holds.

    - A character that is not printable (line breaks, NUL, other controls, the Unicode line
      separators) or a lone surrogate becomes an escape (`\x00`, `\u2028`, `\udc80`), so the text
      stays on its line and the source stays valid UTF-8.
    - `#` becomes `\x23`: black reads `# fmt: off` and `# fmt: skip` anywhere in a comment (and
      other tools `# type:` or `# noqa`); a template must not switch them on.
    - Three quotes in a row get a backslash before the third: inside a raw string only three
      unescaped quotes end it, and a backslash-quote pair is never read as one.
    - A quote or a backslash at the very end would merge with the closing quotes (a transform
      `"{content}"` ends a docstring that way): a space is added after it.

    Jinja never renders its own output again, so `{{ }}` and `{% %}` in the text stay text."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if ch == "#":
            out.append("\\x23")
        elif ch.isprintable() and not 0xD800 <= code <= 0xDFFF:
            out.append(ch)
        else:
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    line = "".join(out).replace('"""', '""\\"')
    return line + " " if line.endswith(('"', "\\")) else line


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["py"] = py_literal
    env.filters["comment"] = comment_text
    return env


_ENV = _environment()


def render_module(model: ModuleModel) -> str:
    """The module's source: rendered, then formatted by black unless it is longer than
    `FORMAT_MAX_CHARS` (limits.py; black formats about 90 KB a second), when the rendered text
    is the module: the same code, as deterministic, only not formatted."""
    source = _ENV.get_template("module.py.j2").render(m=model)
    if len(source) > FORMAT_MAX_CHARS:
        return source
    return black.format_str(source, mode=_BLACK_MODE)
