"""Where the built-in templates, bundled samples and committed modules live, and how a command-line
TEMPLATE argument becomes a template dict.

In:  a family name (`smollm3`), or a path to a template JSON file, a tokenizer_config.json (its
     `response_template` key is used) or a directory holding one.
Out: `families()`, `builtin_template(family)`, `load_sample(family)`, `committed_module(family)`,
     `load_template(source)` (the public `chatparse.load_template`: a template from wherever a user
     has one), and `resolve_template(arg) -> TemplateSource`, which also says how to name the source in a
     generated module's header: relative to the package root when the file is inside it
     (`templates/smollm3.json`), else by its file name, so the header never depends on the cwd.
Guarantee: every failure to find or read a template is a `TemplateSourceError` whose message is one
line naming the argument (and, for bad JSON, the line and column; for an unknown family, the close
names). Validating the template itself is the compiler's job, not this module's.

Package data is located with `importlib.resources` on the `chatparse` package, so this works from a
checkout, an editable install or a regular install alike.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import json
import os
import shlex
import types
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

TEMPLATES_DIR = "templates"
SAMPLES_DIR = "samples"
GENERATED_DIR = "generated"
CONFIG_KEY = "response_template"
CONFIG_NAME = "tokenizer_config.json"
# Keys that only a tokenizer config has: a JSON object carrying one of them is a config whose
# `response_template` is missing, not a template with unknown keys.
_CONFIG_ONLY_KEYS = frozenset(
    {
        "chat_template",
        "tokenizer_class",
        "added_tokens_decoder",
        "model_max_length",
        "bos_token",
        "eos_token",
    }
)


# Up to this many known names are listed in an "unknown family" error; beyond, it points to a listing.
_LISTED_INLINE = 8


class TemplateSourceError(Exception):
    """A TEMPLATE/sample argument could not be found or read; the message is one line."""


@dataclass(frozen=True)
class TemplateSource:
    """A template found from a command-line argument."""

    template: Any  # the response_template value (a dict unless the file is malformed)
    label: str  # how the header names it: "templates/x.json", or a file name outside the package
    family: str | None  # the built-in family, when the argument named one (or its templates/ file)
    path: Path | None  # the file read


def package_root() -> Path:
    """The directory of the installed `chatparse` package (the repository root in a checkout)."""
    return Path(str(files("chatparse")))


def _data_dir(name: str) -> Path:
    return package_root() / name


def _stems(directory: Path, suffix: str) -> list[str]:
    if not directory.is_dir():
        return []
    return sorted(
        p.name[: -len(suffix)]
        for p in directory.iterdir()
        if p.name.endswith(suffix) and p.is_file() and not p.name.startswith(("_", "."))
    )


def families() -> list[str]:
    """The built-in families: every templates/<family>.json, sorted."""
    return _stems(_data_dir(TEMPLATES_DIR), ".json")


def sample_families() -> list[str]:
    """The built-in families that also have a bundled sample (what `chatparse demo` can run)."""
    samples = set(_stems(_data_dir(SAMPLES_DIR), ".json"))
    return [f for f in families() if f in samples]


def generated_families() -> list[str]:
    """Every committed generated/<family>.py (including ones whose template is gone)."""
    return _stems(_data_dir(GENERATED_DIR), ".py")


def template_path(family: str) -> Path:
    return _data_dir(TEMPLATES_DIR) / f"{family}.json"


def sample_path(family: str) -> Path:
    return _data_dir(SAMPLES_DIR) / f"{family}.json"


def generated_path(family: str) -> Path:
    return _data_dir(GENERATED_DIR) / f"{family}.py"


def relative_label(path: Path) -> str:
    """`path` relative to the package root (POSIX separators) when inside it, else its file name.

    Both the header's source path and the rebuild command use this, so generated output is the same
    from whatever directory the compiler runs.
    """
    resolved = Path(os.path.realpath(path))
    try:
        return resolved.relative_to(os.path.realpath(package_root())).as_posix()
    except ValueError:
        return resolved.name


def rebuild_command(source_label: str, out_label: str | None) -> str:
    """The command that regenerates a module; printed in its header."""
    command = f"compile-template {shlex.quote(source_label)}"
    return f"{command} -o {shlex.quote(out_label)}" if out_label is not None else command


def unknown_family_message(
    name: str,
    known: list[str],
    what: str = "built-in template",
    listing: str = "compile-template --list",
) -> str:
    """`name` is not in `known`: suggest close names, else list the few known (or say how to)."""
    message = f"unknown {what} {name!r}"
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        message += f"; did you mean {', '.join(close)}?"
    elif not known:
        message += f"; none are installed (no {TEMPLATES_DIR}/*.json)"
    elif len(known) <= _LISTED_INLINE:
        message += f"; known: {', '.join(known)}"
    else:
        message += f"; see `{listing}`"
    return message


def read_json(path: Path, what: str = "") -> Any:
    """Parse a JSON file, turning every failure into a one-line `TemplateSourceError`."""
    label = f"{what} {path}" if what else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateSourceError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise TemplateSourceError(f"{label}: is a directory, not a JSON file") from None
    except UnicodeDecodeError as exc:
        raise TemplateSourceError(
            f"{label}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except OSError as exc:
        raise TemplateSourceError(f"{label}: cannot read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TemplateSourceError(
            f"{label}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


def _looks_like_config(path: Path, data: Any) -> bool:
    if path.name == CONFIG_NAME:
        return True
    return isinstance(data, dict) and not _CONFIG_ONLY_KEYS.isdisjoint(data)


def load_template_file(path: Path) -> Any:
    """The template in a template file or a tokenizer_config.json (its `response_template`)."""
    data = read_json(path)
    if isinstance(data, dict) and CONFIG_KEY in data:
        return data[CONFIG_KEY]
    if _looks_like_config(path, data):
        raise TemplateSourceError(
            f"{path}: this tokenizer config has no {CONFIG_KEY!r} key (the model ships no response "
            "template; write one or use a built-in family)"
        )
    return data


def builtin_template(family: str) -> Any:
    """The built-in template of `family` (a TemplateSourceError names close families)."""
    path = template_path(family)
    if not path.is_file():
        raise TemplateSourceError(unknown_family_message(family, families()))
    return load_template_file(path)


def load_sample(family: str) -> dict:
    """The bundled sample {"prefix", "text", "tools"} of `family`."""
    path = sample_path(family)
    if not path.is_file():
        raise TemplateSourceError(
            unknown_family_message(
                family,
                sample_families(),
                what="family with a bundled sample",
                listing="chatparse demo",
            )
        )
    sample = read_json(path, "sample")
    if not isinstance(sample, dict) or not isinstance(sample.get("text"), str):
        raise TemplateSourceError(f"sample {path}: expected an object with a string 'text'")
    return sample


def committed_module(family: str) -> types.ModuleType | None:
    """`chatparse.generated.<family>` when it is committed, else None."""
    if not family.isidentifier():
        return None
    name = f"chatparse.generated.{family}"
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def _is_path_like(arg: str) -> bool:
    return os.sep in arg or "/" in arg or arg.endswith(".json") or arg.startswith(".")


def resolve_template(arg: str) -> TemplateSource:
    """A TEMPLATE argument: an existing file or directory first, then a built-in family name."""
    path = Path(arg)
    if path.is_dir():
        config = path / CONFIG_NAME
        if not config.is_file():
            raise TemplateSourceError(f"{arg}: directory has no {CONFIG_NAME}")
        path = config
    if path.is_file():
        label = relative_label(path)
        stem = label.removeprefix(f"{TEMPLATES_DIR}/").removesuffix(".json")
        family = stem if label == f"{TEMPLATES_DIR}/{stem}.json" and "/" not in stem else None
        return TemplateSource(load_template_file(path), label, family, path)
    if _is_path_like(arg):
        raise TemplateSourceError(f"{arg}: no such file")
    path = template_path(arg)
    if not path.is_file():
        raise TemplateSourceError(unknown_family_message(arg, families()))
    return TemplateSource(load_template_file(path), f"{TEMPLATES_DIR}/{arg}.json", arg, path)


def load_template(source: Any) -> Any:
    """The response template of `source`, from wherever a user has one.

    `source` is a template dict (returned as is: the compiler validates it), a generated module
    (its `TEMPLATE`), a path (`str` or `os.PathLike`: a template file, a tokenizer_config.json or a
    model directory holding one) or a built-in family name, or a tokenizer: its `response_template`
    attribute, else `init_kwargs["response_template"]`, or a processor's `.tokenizer`. Tokenizers
    are read by duck typing, so nothing here imports transformers.
    """
    if isinstance(source, dict):
        return source
    if isinstance(source, types.ModuleType):
        if not isinstance(getattr(source, "TEMPLATE", None), dict):
            raise TemplateSourceError(
                f"module {source.__name__}: no TEMPLATE dict (not generated?)"
            )
        return source.TEMPLATE
    if isinstance(source, (str, os.PathLike)):
        return resolve_template(os.fspath(source)).template
    found = _tokenizer_template(source)
    if found is None:
        tokenizer = getattr(source, "tokenizer", None)  # a processor wraps its tokenizer
        found = _tokenizer_template(tokenizer) if tokenizer is not None else None
    if found is None:
        raise TemplateSourceError(
            f"{type(source).__name__} object: no {CONFIG_KEY!r} (expected a template dict, a path, "
            f"a built-in family name, a generated module, or a tokenizer with a {CONFIG_KEY})"
        )
    return found


# The attributes `load_template` reads a template from (tokenizer, old tokenizer, processor).
_TEMPLATE_ATTRIBUTES = (CONFIG_KEY, "init_kwargs", "tokenizer")


def names_a_template(source: Any) -> bool:
    """Whether `load_template` would look for a template in `source` (a path, a name, a module,
    or an object with one of the attributes it reads); anything else is not a template source."""
    if isinstance(source, (dict, str, os.PathLike, types.ModuleType)):
        return True
    return any(hasattr(source, name) for name in _TEMPLATE_ATTRIBUTES)


def _tokenizer_template(tokenizer: Any) -> Any:
    """A tokenizer's response template, or None: the attribute transformers sets, then the config
    kwargs it was loaded with (older releases keep unknown config keys only there)."""
    template = getattr(tokenizer, CONFIG_KEY, None)
    if template is not None:
        return template
    init_kwargs = getattr(tokenizer, "init_kwargs", None)
    if isinstance(init_kwargs, dict):
        return init_kwargs.get(CONFIG_KEY)
    return None


__all__ = [
    "TemplateSource",
    "TemplateSourceError",
    "builtin_template",
    "committed_module",
    "families",
    "generated_families",
    "generated_path",
    "load_sample",
    "load_template",
    "load_template_file",
    "package_root",
    "read_json",
    "rebuild_command",
    "relative_label",
    "resolve_template",
    "sample_families",
    "sample_path",
    "template_path",
    "unknown_family_message",
]
