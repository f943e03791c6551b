"""Per-delta CPU time inside vLLM: chatparse's tool parser against vLLM's own, same family.

Run in the vLLM venv that `.ci/engine-tests` builds (from outside the clone, whose openai.py
would shadow the `openai` package vLLM imports):

    cd /tmp && ~/.cache/chatparse-engines/vllm-*/bin/python /path/to/chatparse/benchmarks/engine_vllm.py

For each family and argument size, one output (a sentence, then one call whose one string
argument has that many characters) is streamed one token a step through each parser's
`extract_tool_calls_streaming`, as vLLM's serving loop calls it (previous and current text and
token ids; a stand-in tokenizer trained in the script, whose tokens average about 3 characters;
the text of a step decoded incrementally with special tokens kept). chatparse's plugin reads the
ids (its default with a fast tokenizer), and again the text (`CHATPARSE_TOKEN_IDS=0`). CPU time
(`time.thread_time`) inside the parser's calls over the whole stream, divided by its deltas; the
parsers interleaved in one process, repetitions alternated; medians with min and max. Each call is
timed on its own, so each interval also holds one clock read's cost (about 1 us on a slow VM,
where chatparse's delta costs 5-7): the median of an empty interval, measured at the start and
printed, is subtracted from every call's. Every parser's accumulated arguments are checked against
the argument before anything is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

FAMILIES = {
    # chatparse family: (vLLM's parser name, how one call is written)
    "hermes": (
        "hermes",
        lambda name, args: f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(args)}}}\n'
        "</tool_call><|im_end|>",
    ),
    "qwen3_coder": (
        "qwen3_coder",
        lambda name, args: "<tool_call>\n<function="
        + name
        + ">\n"
        + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
        + "</function>\n</tool_call><|im_end|>",
    ),
    "deepseek_v3": (
        "deepseek_v3",
        lambda name, args: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        + name
        + f"\n```json\n{json.dumps(args)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        "<｜end▁of▁sentence｜>",
    ),
}
SPECIALS = [
    "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>",
    "<｜end▁of▁sentence｜>",
]  # fmt: skip
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {"type": "object", "properties": {"content": {"type": "string"}}},
        },
    }
]


def tokenizer_for(text: str):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=alphabet, show_progress=False)
    tokenizer.train_from_iterator([text], trainer)
    tokenizer.add_special_tokens([AddedToken(token, special=True) for token in SPECIALS])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer)


def engine_steps(tokenizer, text: str) -> tuple[list[str], list[list[int]]]:
    """vLLM's deltas for `text`: one token id a step and the text it adds, decoded incrementally
    with special tokens kept (the plugin's requests ask for them)."""
    from tokenizers.decoders import DecodeStream

    decoder, backend = DecodeStream(skip_special_tokens=False), tokenizer.backend_tokenizer
    ids = tokenizer.encode(text, add_special_tokens=False)
    pieces = [decoder.step(backend, token_id) or "" for token_id in ids]
    assert "".join(pieces) == text
    return pieces, [[token_id] for token_id in ids]


def output_for(family: str, size: int) -> str:
    words = "the quick brown fox jumps over the lazy dog and writes some code "
    value = (words * (size // len(words) + 1))[:size]
    return "I will write it now." + FAMILIES[family][1]("write_file", {"content": value})


def clock_cost() -> float:
    """The CPU seconds an empty `thread_time` interval reads (the median of many)."""
    clock = time.thread_time
    spans = []
    for _ in range(20001):
        started = clock()
        spans.append(clock() - started)
    return statistics.median(spans)


def stream_once(
    parser_class, tokenizer, request, pieces, piece_ids, overhead: float = 0.0
) -> tuple[float, float, str]:
    """CPU seconds for one stream's calls (each call's interval less `overhead`, the clock's own
    cost), CPU seconds for building the parser (once per request in vLLM), and the arguments the
    client got."""
    started = time.thread_time()
    parser = parser_class(tokenizer, request.tools)
    built = time.thread_time() - started - overhead
    # vLLM hands an engine-based parser the delta alone (`StreamState.advance`), any other one the
    # text and ids so far; building those is the serving loop's cost, not the parser's.
    engine_based = getattr(parser, "engine_based_streaming", False)
    previous_text, previous_ids, arguments = "", [], []
    spent = 0.0
    for piece, ids in zip(pieces, piece_ids):
        if engine_based:
            current_text, current_ids = piece, ids
        else:
            current_text, current_ids = previous_text + piece, previous_ids + ids
        started = time.thread_time()
        delta = parser.extract_tool_calls_streaming(
            previous_text, current_text, piece, previous_ids, current_ids, ids, request
        )
        spent += time.thread_time() - started - overhead
        if delta is not None:
            for call in delta.tool_calls or []:
                if call.function is not None and call.function.arguments:
                    arguments.append(call.function.arguments)
        if not engine_based:
            previous_text, previous_ids = current_text, current_ids
    finish = getattr(parser, "finish_streaming", None)
    if engine_based and finish is not None:
        started = time.thread_time()
        delta = finish()
        spent += time.thread_time() - started - overhead
        for call in (delta.tool_calls if delta is not None else None) or []:
            if call.function is not None and call.function.arguments:
                arguments.append(call.function.arguments)
    return spent, built, "".join(arguments) + parser.get_remaining_unstreamed_args()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--sizes", default="300,3000,30000")
    options.add_argument("--families", default=",".join(FAMILIES))
    options.add_argument("--reps", type=int, default=7)
    args = options.parse_args()

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.plugins import load_general_plugins
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    overhead = clock_cost()
    print(f"(an empty clock interval reads {overhead * 1e6:.2f} us, subtracted from each call's)\n")
    request = ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, stream=True
    )
    print("| family | argument chars | deltas | vLLM's parser (us/delta) | chatparse, ids (us/delta) "
          "| speedup | chatparse, text (us/delta) | speedup |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    setups: dict[str, dict[str, list[float]]] = {}  # family -> parser -> us per constructor
    for family in args.families.split(","):
        engine_name = FAMILIES[family][0]
        for size in map(int, args.sizes.split(",")):
            text = output_for(family, size)
            tokenizer = tokenizer_for(text)
            pieces, piece_ids = engine_steps(tokenizer, text)
            chatparse = ToolParserManager.get_tool_parser(f"chatparse-{family}")
            parsers = {  # name -> (parser class, $CHATPARSE_TOKEN_IDS)
                "engine": (ToolParserManager.get_tool_parser(engine_name), "1"),
                "chatparse": (chatparse, "1"),
                "chatparse_text": (chatparse, "0"),
            }
            times: dict[str, list[float]] = {name: [] for name in parsers}
            builds = setups.setdefault(family, {name: [] for name in parsers})
            results = {}
            for rep in range(args.reps):
                order = list(parsers) if rep % 2 == 0 else list(parsers)[::-1]
                for name in order:
                    parser_class, token_ids = parsers[name]
                    os.environ["CHATPARSE_TOKEN_IDS"] = token_ids
                    seconds, built, arguments = stream_once(
                        parser_class, tokenizer, request, pieces, piece_ids, overhead
                    )
                    times[name].append(seconds / len(pieces) * 1e6)
                    builds[name].append(built * 1e6)
                    results[name] = arguments
            value = json.loads(results["chatparse"])["content"]
            assert len(value) == size, (family, size, len(value))
            assert results["chatparse_text"] == results["chatparse"]
            engine_ok = _same_arguments(results["engine"], value)

            def cell(values: list[float]) -> str:
                return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

            engine = statistics.median(times["engine"])
            ratio = engine / statistics.median(times["chatparse"])
            text_ratio = engine / statistics.median(times["chatparse_text"])
            note = "" if engine_ok else " (vLLM's arguments differ)"
            print(
                f"| {family} | {size:,} | {len(pieces)} | {cell(times['engine'])}{note} "
                f"| {cell(times['chatparse'])} | {ratio:.1f}x "
                f"| {cell(times['chatparse_text'])} | {text_ratio:.1f}x |"
            )
    # Once per request, outside the figures above: vLLM builds a parser per request.
    print(
        "\n| family | building vLLM's parser (us) | chatparse's, ids (us) | chatparse's, text (us) |"
    )
    print("|---|---|---|---|")
    for family, builds in setups.items():
        cells = [f"{statistics.median(builds[name]):.1f}" for name in builds]
        print(f"| {family} | " + " | ".join(cells) + " |")


def _same_arguments(text: str, value: str) -> bool:
    try:
        return json.loads(text) == {"content": value}
    except ValueError:
        return False


if __name__ == "__main__":
    main()
