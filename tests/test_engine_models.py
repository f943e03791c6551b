"""`plugins.engine_models.unwrapped_validator`: an engine's response model built without the
logging validator wrapped around it, only where that gives the same models (pydantic stand-ins
here; tests/engines/test_vllm_plugin.py holds it with vLLM's own models)."""

from __future__ import annotations

import pytest

pydantic = pytest.importorskip("pydantic")

from chatparse.plugins.engine_models import LOGGING_WRAPPER, unwrapped_validator  # noqa: E402

CALLS: list[str] = []


class Logged(pydantic.BaseModel):
    """vLLM's `OpenAIBaseModel`: extra keys allowed, a wrap validator that only logs."""

    model_config = pydantic.ConfigDict(extra="allow")

    @pydantic.model_validator(mode="wrap")
    @classmethod
    def __log_extra_fields__(cls, data, handler):
        CALLS.append(cls.__name__)
        return handler(data)


class Function(pydantic.BaseModel):
    name: str | None = None
    arguments: str | None = None


class Call(Logged):
    index: int
    id: str | None = None
    function: Function | None = None


class Message(Logged):
    content: str | None = None
    tool_calls: list[Call] = pydantic.Field(default_factory=list)


SAMPLES = [
    {"content": None, "tool_calls": [{"index": 0, "function": {"arguments": "{"}}]},
    {"content": "a", "tool_calls": [{"index": 1, "id": "c", "function": {"name": "f"}}]},
    {"content": "a"},
]


def test_the_logging_wrapper_is_left_out_and_the_models_are_the_same():
    validate = unwrapped_validator(Message, LOGGING_WRAPPER, SAMPLES)
    assert validate is not Message.__pydantic_validator__.validate_python
    for sample in SAMPLES:
        CALLS.clear()
        made = validate(sample)
        assert CALLS == []  # neither the message's wrapper nor its calls'
        expected = Message.model_validate(sample)
        assert CALLS  # (the model's own validator runs them)
        assert type(made) is Message
        assert all(type(call) is Call for call in made.tool_calls)
        assert made == expected
        assert made.model_fields_set == expected.model_fields_set
        assert made.model_dump_json(exclude_unset=True) == expected.model_dump_json(
            exclude_unset=True
        )


def test_a_wrapper_of_that_name_that_changes_the_data_keeps_the_models_own_validator():
    class Changing(pydantic.BaseModel):
        content: str | None = None

        @pydantic.model_validator(mode="wrap")
        @classmethod
        def __log_extra_fields__(cls, data, handler):
            return handler({**data, "content": "changed"})

    own = Changing.__pydantic_validator__.validate_python
    assert unwrapped_validator(Changing, LOGGING_WRAPPER, [{"content": "a"}]) == own


def test_other_wrappers_stay():
    class Upper(pydantic.BaseModel):
        content: str | None = None

        @pydantic.model_validator(mode="wrap")
        @classmethod
        def upper(cls, data, handler):
            return handler({"content": data["content"].upper()})

    validate = unwrapped_validator(Upper, LOGGING_WRAPPER, [{"content": "a"}])
    assert validate({"content": "b"}).content == "B"
