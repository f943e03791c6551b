"""`plugins/template_choice.py` in the main environment (the engine tests drive it inside vLLM and
SGLang): which module a parser name serves, and what that costs per request."""

from __future__ import annotations

import pytest

from chatparse import catalogue
from chatparse.plugins import template_choice
from chatparse.plugins.template_choice import TemplateChoiceError, choose_module, token_id_tokenizer


def test_a_family_name_is_looked_up_once_per_process(monkeypatch):
    """An engine builds a parser per request: after the first, `chatparse-<family>` neither lists
    the package's modules nor reads the family's template again."""
    import chatparse.generated.hermes as hermes

    monkeypatch.setattr(template_choice, "_BUILT_IN", {})
    listings, reads = [], []
    real_list, real_read = catalogue.generated_families, catalogue.load_template
    monkeypatch.setattr(catalogue, "generated_families", lambda: listings.append(1) or real_list())
    monkeypatch.setattr(catalogue, "load_template", lambda s: reads.append(s) or real_read(s))
    name = "".join(["chatparse-", "hermes"])  # (a new string, as vLLM's registry gives)
    assert choose_module(name) is hermes
    listings.clear(), reads.clear()
    for _ in range(3):
        assert choose_module("".join(["chatparse-", "hermes"])) is hermes
    assert listings == [] and reads == []


def test_an_unknown_family_names_the_built_ins():
    with pytest.raises(
        TemplateChoiceError, match="names no built-in family; the built-ins are .*hermes"
    ):
        choose_module("chatparse-no_such_family")


def test_reading_ids_is_decided_from_the_tokenizers_class(monkeypatch):
    """Whether a tokenizer is a fast one is asked of its class: the instance's
    `added_tokens_decoder` builds a dict from the Rust tokenizer every time it is read."""
    monkeypatch.delenv(template_choice.TOKEN_IDS_ENV, raising=False)
    built = []

    class Fast:
        backend_tokenizer = object()

        @property
        def added_tokens_decoder(self):
            built.append(1)
            return {}

    tokenizer = Fast()
    assert token_id_tokenizer(tokenizer) is tokenizer
    assert built == []
    assert token_id_tokenizer(object()) is None
    monkeypatch.setenv(template_choice.TOKEN_IDS_ENV, "0")
    assert token_id_tokenizer(tokenizer) is None
