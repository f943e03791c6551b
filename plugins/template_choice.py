"""Which response template an engine plugin serves, decided the same way for every engine.

The engine names a parser on its command line (`--tool-call-parser chatparse`):

- `chatparse-<family>` serves that built-in family (`chatparse-qwen3`): its committed module,
  nothing compiled.
- `chatparse` serves the template named by the environment variable `CHATPARSE_TEMPLATE` (a
  built-in family, a template file, a tokenizer_config.json or a model directory), else the
  served tokenizer's own `response_template`.

Anything else, or a `chatparse` with neither, raises `TemplateChoiceError` naming what was tried,
at the engine's start (the parser is built per request from a module loaded once).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from typing import Any

PARSER_NAME = "chatparse"
FAMILY_PREFIX = PARSER_NAME + "-"
ENV_VAR = "CHATPARSE_TEMPLATE"
# What a plugin does with a call that does not parse or that the output cuts off
# (`DeltaStream(malformed=...)`): the lenient policies only, since a server must not fail a stream.
MALFORMED_ENV = "CHATPARSE_MALFORMED"
PLUGIN_POLICIES = ("drop", "content")
# Whether a plugin reads the engine's token ids where it gives them (`token_id_tokenizer`).
TOKEN_IDS_ENV = "CHATPARSE_TOKEN_IDS"


class TemplateChoiceError(ValueError):
    """No response template for the parser name the engine was given."""


def parser_names() -> list[str]:
    """Every parser name a plugin registers: `chatparse` and `chatparse-<family>` per built-in."""
    from ..catalogue import generated_families

    return [PARSER_NAME] + [FAMILY_PREFIX + family for family in generated_families()]


# The committed module of each `chatparse-<family>` name served so far: an engine builds a parser
# per request, and the package's modules do not change while it runs.
_BUILT_IN: dict[str, types.ModuleType] = {}


def choose_module(parser_name: str, tokenizer: Any = None) -> types.ModuleType:
    """The generated parser module to serve under `parser_name` for a model with `tokenizer`."""
    from .. import load_module
    from ..catalogue import TemplateSourceError, generated_families

    if parser_name.startswith(FAMILY_PREFIX):
        module = _BUILT_IN.get(parser_name)
        if module is not None:
            return module
        family = parser_name[len(FAMILY_PREFIX) :]
        if family not in generated_families():  # (a listing of the package's folder: once)
            raise TemplateChoiceError(
                f"{parser_name!r} names no built-in family; the built-ins are "
                + ", ".join(generated_families())
            )
        module = _BUILT_IN[parser_name] = load_module(family)
        return module
    if parser_name != PARSER_NAME:
        raise TemplateChoiceError(f"{parser_name!r} is not a chatparse parser name")
    named = os.environ.get(ENV_VAR)
    source: Any = named if named else tokenizer
    what = f"${ENV_VAR}={named!r}" if named else "the tokenizer's response_template"
    if source is None:
        raise TemplateChoiceError(
            f"parser {PARSER_NAME!r} needs a response template: set {ENV_VAR} to a built-in family "
            f"or a template file, name a built-in as {FAMILY_PREFIX}<family>, or serve a tokenizer "
            "whose tokenizer_config.json has a response_template"
        )
    try:
        return load_module(source)
    except (TemplateSourceError, ValueError) as exc:
        raise TemplateChoiceError(f"{what}: {exc}") from None


def malformed_policy() -> str:
    """The `DeltaStream` policy every plugin serves with: `$CHATPARSE_MALFORMED`, "drop" by default."""
    policy = os.environ.get(MALFORMED_ENV, "drop")
    if policy not in PLUGIN_POLICIES:
        raise TemplateChoiceError(
            f"{MALFORMED_ENV} must be one of {PLUGIN_POLICIES}, got {policy!r}"
        )
    return policy


def token_id_tokenizer(tokenizer: Any) -> Any:
    """The tokenizer through which a plugin reads the engine's token ids (transformers 5.25's
    token-id input: a control token the model spelled out with ordinary tokens is text, and the
    output is decoded with its special tokens whatever the request asks), or None, when the
    plugin reads the engine's text: `$CHATPARSE_TOKEN_IDS=0`, or a tokenizer that is not a fast
    one (`tokenizers` decodes the ids)."""
    setting = os.environ.get(TOKEN_IDS_ENV, "1")
    if setting not in ("0", "1"):
        raise TemplateChoiceError(f"{TOKEN_IDS_ENV} must be 0 or 1, got {setting!r}")
    if setting == "0" or tokenizer is None:
        return None
    kind = type(tokenizer)  # (asked of the class: the instance's properties build their values)
    if not (hasattr(kind, "backend_tokenizer") and hasattr(kind, "added_tokens_decoder")):
        return None
    try:
        from tokenizers.decoders import DecodeStream  # noqa: F401
    except ImportError:
        return None
    return tokenizer
