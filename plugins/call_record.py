"""What an engine's parser records of the tool calls it streamed, kept cheap to grow.

Both vLLM's `ToolParser` and SGLang's detectors keep `prev_tool_call_arr` (per call its name and
arguments) and `streamed_args_for_tool` (per call the argument text sent); at the end of a stream
the engine sends the difference between the two as the last fragment. The plugins keep both equal
to the text sent, so that difference is always empty and nothing goes out twice. The text is kept
as the pieces sent (a string grown per delta would be copied per delta: quadratic in a long
argument) and joined when the engine reads it.
"""

from __future__ import annotations


class SentCalls:
    """A mixin for an engine parser class: `record(fragment)` per chatparse tool-call fragment."""

    _sent: list[tuple[str | None, list[str]]]

    @property
    def prev_tool_call_arr(self) -> list[dict]:
        return [{"name": name, "arguments": "".join(sent)} for name, sent in self._sent]

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list[dict]) -> None:
        # The engine's base class resets it in its constructor.
        self._sent = [(call.get("name"), [call.get("arguments") or ""]) for call in value]

    @property
    def streamed_args_for_tool(self) -> list[str]:
        return ["".join(sent) for _, sent in self._sent]

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list[str]) -> None:
        assert not value or len(value) == len(self._sent)  # the engines only ever reset it

    def record(self, fragment: dict) -> str:
        """Note one fragment (`DeltaStream`'s `tool_calls` item); returns its argument text."""
        function = fragment["function"]
        arguments = function.get("arguments", "")
        if "id" in fragment:  # a call's first fragment
            self._sent.append((function["name"], [arguments]))
        else:
            self._sent[fragment["index"]][1].append(arguments)
        return arguments
