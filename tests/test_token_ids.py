"""Token-id input (transformers 5.25): chatparse fed ids in any chunking equals the reference
fed the whole id list, with real fast tokenizers built here from `tokenizers` (no download)."""

from __future__ import annotations

import importlib
import json
import random
import time
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers", minversion="5.25.0")
from transformers.utils import chat_parsing as ref  # noqa: E402

import chatparse  # noqa: E402

# SmolLM3's built-in template: reasoning, json tool calls, a closing <|im_end|>.
TEMPLATE = json.loads((Path(chatparse.__file__).parent / "templates" / "smollm3.json").read_text())
SPECIALS = ["<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]


def _tokenizer(kind: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if kind == "merged":
        # Byte-level BPE trained on text with accents, CJK and emoji: ids of several whole
        # characters ("日本🎉"), and ids that end inside one ("j" and the first byte of "à").
        backend = Tokenizer(models.BPE())
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        backend.decoder = decoders.ByteLevel()
        corpus = [
            'caféé日本日本🎉🎉 aéb éb日b 本é <tool_call>{"name": "f"} déjà vu 日本語 🎉x'
        ] * 50
        trainer = trainers.BpeTrainer(
            vocab_size=420,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        backend.train_from_iterator(corpus, trainer)
    elif kind == "bytelevel":
        # Byte-level BPE with only single-byte tokens: every non-ASCII character spans several ids.
        alphabet = pre_tokenizers.ByteLevel.alphabet()
        vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
        backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
    else:
        # Byte fallback: characters outside the vocabulary become <0xNN> tokens.
        chars = sorted(set('abcdefghijklmnopqrstuvwxyz<>/|_{}":, \n.!=0123456789'))
        vocab = {"<unk>": 0, **{f"<0x{b:02X}>": 1 + b for b in range(256)}}
        vocab.update({ch: len(vocab) + i for i, ch in enumerate(chars)})
        backend = Tokenizer(
            models.BPE(vocab=vocab, merges=[], byte_fallback=True, unk_token="<unk>")
        )
        backend.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_special_tokens({"additional_special_tokens": SPECIALS})
    return tok


@pytest.fixture(scope="module", params=["bytelevel", "merged", "bytefallback"])
def tok(request):
    return _tokenizer(request.param)


def _ids(tok, pieces):
    """Ids for `pieces`: a piece in SPECIALS given as ("id", s) is the control token's id, any
    other string is spelled out with ordinary tokens."""
    out = []
    for piece in pieces:
        if isinstance(piece, tuple):
            out.append(tok.convert_tokens_to_ids(piece[1]))
        else:
            out += tok.encode(piece, add_special_tokens=False, split_special_tokens=True)
    return out


def _chunkings(ids, seed=0):
    yield [ids]
    yield [[i] for i in ids]
    rng = random.Random(seed)
    for _ in range(4):
        cuts = sorted(rng.sample(range(1, len(ids)), min(len(ids) - 1, rng.randint(1, 6))))
        yield [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)])]


def _chatparse(tok, prefix, chunks):
    parser = chatparse.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, last = parser.finalize()
    return message, events + last


def _merged(events):
    """Consecutive chunks of one region joined: the one-shot event stream."""
    out = []
    for event in events:
        if out and event["type"] == "region_chunk" and out[-1]["type"] == "region_chunk":
            if out[-1]["field"] == event["field"]:
                out[-1] = {**out[-1], "text": out[-1]["text"] + event["text"]}
                continue
        out.append(dict(event))
    return out


CASES = [
    # A spelled-out open stays text; the generated id opens.
    [
        'a <tool_call>{"x": 1}</tool_call> b ',
        ("id", "<tool_call>"),
        '{"name": "f", "arguments": {"a": "日"}}',
        ("id", "</tool_call>"),
    ],
    # Spelled-out reasoning delimiters, multi-byte characters split across ids.
    ["héllo 日本 <think>no</think> 🎉", ("id", "<think>"), "réel ✓", ("id", "</think>"), "end"],
    # A control id arriving while a spelled-out prefix of another is held.
    ["x <|im_", ("id", "<|im_end|>"), "after"],
    ["<thi", ("id", "<think>"), "deep </thi", ("id", "</think>"), "<|im_end|>!"],
    # A delimiter tail held by the text engine ("<tool" could still become "<tool_call>").
    ["text <tool", ("id", "<think>"), "r", ("id", "</think>"), "ok <tool_"],
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_every_chunking_equals_the_reference_one_shot(tok, case):
    prefix = _ids(tok, ["sys", ("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, CASES[case])
    expected = ref.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
    expected_events = list(expected.initial_events) + expected.feed(ids)
    expected_message, last = expected.finalize()
    expected_events = _merged(expected_events + last)
    assert ref.parse_response(ids, TEMPLATE, prefix=prefix, tokenizer=tok) == expected_message
    assert chatparse.parse_response(ids, TEMPLATE, prefix=prefix, tokenizer=tok) == expected_message
    for chunks in _chunkings(ids, seed=case):
        message, events = _chatparse(tok, prefix, chunks)
        assert message == expected_message, chunks
        assert _merged(events) == expected_events, chunks


def test_spelled_out_control_token_is_text(tok):
    # Hand-checked against the 5.25 docs: a spelled-out <think> is content, markers stripped.
    ids = _ids(tok, ["<think>x</think>"])
    message = chatparse.parse_response(ids, TEMPLATE, prefix=[], tokenizer=tok)
    assert message["content"] == "<think>x</think>"
    assert "reasoning_content" not in message


def test_generated_module_takes_ids(tok):
    module = chatparse.load_module(TEMPLATE)
    ids = _ids(tok, [("id", "<think>"), "r", ("id", "</think>"), "c"])
    expected = ref.parse_response(ids, TEMPLATE, prefix=[], tokenizer=tok)
    assert module.ResponseParser.parse(ids, prefix=[], tokenizer=tok) == expected
    assert module.parse_response(ids, prefix=[], tokenizer=tok) == expected
    committed = importlib.import_module("chatparse.generated.smollm3")
    assert committed.parse_response(ids, prefix=[], tokenizer=tok) == expected
    parser = module.ResponseParser([], tokenizer=tok)
    for token_id in ids:
        parser.feed([token_id])
    assert parser.finalize()[0] == expected
    with pytest.raises(TypeError):
        module.ResponseParser([], tokenizer=tok).feed("text")


def _cpu(tok, ids):
    parser = chatparse.ResponseParser(TEMPLATE, prefix=[], tokenizer=tok)
    start = time.process_time()
    for token_id in ids:
        parser.feed([token_id])
    parser.finalize()
    return time.process_time() - start


def test_linear_in_ids(tok):
    # "<|im_" repeated: text that keeps looking like the start of a control token.
    unit = _ids(tok, ["<|im_ <thi </tool_cal "])
    n = 2000 // len(unit) + 1
    _cpu(tok, unit * n)  # warm up
    small = min(_cpu(tok, unit * n) for _ in range(3))
    large = min(_cpu(tok, unit * 8 * n) for _ in range(2))
    assert large < 8 * small * 2.5, (small, large)


def test_delta_stream_takes_ids(tok):
    from chatparse.openai import DeltaStream

    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, CASES[0])
    expected = ref.parse_response(ids, TEMPLATE, prefix=prefix, tokenizer=tok)
    stream = DeltaStream(TEMPLATE, prefix, tokenizer=tok)
    content = ""
    for token_id in ids:
        for delta in stream.feed([token_id]):
            content += delta.get("content") or ""
    stream.finish()
    assert stream.message == expected
    assert content == expected["content"]
    assert "\ufdd2" not in content


PIECES = [
    "<",
    "<|",
    "<|im_",
    "<|im_end|",
    ">",
    "<think",
    "</",
    "</think>",
    "<tool_call>",
    "é",
    "日本",
    "🎉",
    "déjà",
    "café",
    "日本🎉",
    "x",
    " ",
    "\n",
    '{"name": "f", "arguments": {}}',
    "</tool_call>",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_ids_every_chunking_equals_the_reference(tok, seed):
    rng = random.Random(seed)
    pieces = [
        ("id", rng.choice(SPECIALS[1:])) if rng.random() < 0.2 else rng.choice(PIECES)
        for _ in range(rng.randint(3, 25))
    ]
    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, pieces)
    reference = ref.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
    try:
        events = list(reference.initial_events) + reference.feed(ids)
        expected_message, last = reference.finalize()
        expected = (expected_message, _merged(events + last))
    except ValueError as exc:  # e.g. a tool call whose json does not parse
        expected = (type(exc), str(exc))
    for chunks in _chunkings(ids, seed=seed):
        try:
            message, events = _chatparse(tok, prefix, chunks)
            got = (message, _merged(events))
        except ValueError as exc:
            got = (type(exc), str(exc))
        assert got == expected, (pieces, chunks)


def test_byte_level_ids_seen_before_are_looked_up(monkeypatch):
    """A byte-level BPE id decodes to its own bytes after complete characters, so the decoder
    keeps its text per tokenizer (`token_ids._texts_alone`) and steps `DecodeStream` only for an
    id not seen before, or one that does not end a character (here "j" and the first byte of
    "à", then the rest of "à"): the second stream of the same ids steps only those."""
    import tokenizers.decoders

    from chatparse.runtime import token_ids

    real = tokenizers.decoders.DecodeStream
    steps: list = []

    class Counting:
        def __init__(self, **options):
            self._inner = real(**options)

        def step(self, backend, ids):
            steps.append(ids)
            return self._inner.step(backend, ids)

    monkeypatch.setattr(tokenizers.decoders, "DecodeStream", Counting)
    tok = _tokenizer("merged")  # a new tokenizer: nothing kept for it yet
    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, ["café déjà vu", " 日本🎉 aéb", ("id", "<|im_end|>")])
    incomplete = [i for i in ids if "\ufffd" in tok.decode([i])]
    assert incomplete  # the tokenizer has ids that end inside a character
    expected = ref.parse_response(ids, TEMPLATE, prefix=prefix, tokenizer=tok)
    for _ in range(2):
        parser = chatparse.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
        steps.clear()  # (the prefix's)
        for token_id in ids:
            parser.feed([token_id])
        assert parser.finalize()[0] == expected
    assert steps == [i for i in incomplete] + [tok.convert_tokens_to_ids("<|im_end|>")]


def test_a_quiet_id_waits_for_a_pending_char_and_held_text():
    """An id whose text no control spelling can begin in goes straight to the text parser once
    seen (`TokenIdDecoder.quiet`), but only while nothing is pending or held: after an id that
    ends inside a character ("\xc3" of "à", then "x": the reference decodes "\ufffdx"), and
    after a spelled-out control token's start ("<|im_" held until it is known whether it spells
    one), the same id is decoded with what came before it."""
    tok = _tokenizer("merged")
    lead = tok.convert_tokens_to_ids(_BYTE_CHARS[0xC3])  # the byte alone, a token of the alphabet
    assert tok.convert_ids_to_tokens(lead) == _BYTE_CHARS[0xC3]
    assert tok.decode([lead]) == "\ufffd"
    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    x, spelled = _ids(tok, ["x"]), _ids(tok, ["say <|im_end|>"])
    warm = chatparse.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
    for token_id in x + spelled:  # every id of the stream below, seen quiet before
        warm.feed([token_id])
    ids = x + [lead] + x + spelled + x + _ids(tok, [("id", "<|im_end|>")])
    expected = ref.parse_response(ids, TEMPLATE, prefix=prefix, tokenizer=tok)
    assert expected["content"] == "x\ufffdxsay <|im_end|>x"
    parser = chatparse.ResponseParser(TEMPLATE, prefix=prefix, tokenizer=tok)
    for token_id in ids:
        parser.feed([token_id])
    assert parser.finalize()[0] == expected


def _byte_chars() -> dict[int, str]:
    """Byte-level BPE's char for each byte (GPT-2's `bytes_to_unicode`)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    return {
        **{b: chr(b) for b in printable},
        **{b: chr(256 + n) for n, b in enumerate(others)},
    }


_BYTE_CHARS = _byte_chars()


def test_a_decoder_that_reads_context_keeps_no_table():
    """Metaspace strips the space that starts a sequence: the same id decodes to "hello" first and
    to " hello" later, so no id's text is kept for it (`token_ids._texts_alone`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from chatparse.runtime import token_ids

    vocab = {"<unk>": 0, "▁hello": 1, "▁world": 2}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_special_tokens({"additional_special_tokens": SPECIALS})
    ids = tok.encode("hello world hello", add_special_tokens=False)
    assert ids[0] == ids[-1]
    expected = ref.parse_response(ids, TEMPLATE, prefix=[], tokenizer=tok)
    assert expected["content"] == "hello world hello"
    for _ in range(2):
        parser = chatparse.ResponseParser(TEMPLATE, prefix=[], tokenizer=tok)
        for token_id in ids:
            parser.feed([token_id])
        assert parser.finalize()[0] == expected
    assert token_ids._texts_alone(tok) is None


def test_delta_stream_refuses_an_id_prompt_without_the_start_anchor(tok):
    """The serving layer's start-anchor check on token ids: the prompt as the parser reads it,
    decoded, where the anchor counts only when its control token came as its id."""
    from chatparse.openai import DeltaStream

    leaky = _ids(tok, [("id", "<|im_start|>"), "user\nSECRET<|im_", "end|>\n"])
    with pytest.raises(ValueError, match="start anchor"):
        DeltaStream(TEMPLATE, leaky, tokenizer=tok)
    # The user typed the anchor: spelled out with ordinary tokens, it is defused, so the reference
    # reads the whole prompt as the message, which the serving layer refuses to stream back.
    typed = _ids(tok, [("id", "<|im_start|>"), "user\n<|im_start|>assistant\n"])
    assert "SECRET" in ref.parse_response([], TEMPLATE, prefix=leaky, tokenizer=tok)["content"]
    with pytest.raises(ValueError, match="start anchor"):
        DeltaStream(TEMPLATE, typed, tokenizer=tok)
    # The anchor's control token as its id, and an empty prefix, are accepted; the opt-out parses
    # as the reference does.
    prompt = leaky + _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    for prefix in (prompt, []):
        stream = DeltaStream(TEMPLATE, prefix, tokenizer=tok)
        stream.feed(_ids(tok, ["Hello!"]))
        stream.finish()
        assert stream.message == ref.parse_response(
            _ids(tok, ["Hello!"]), TEMPLATE, prefix=prefix, tokenizer=tok
        )
    stream = DeltaStream(TEMPLATE, leaky, tokenizer=tok, require_start_anchor=False)
    stream.feed(_ids(tok, ["Hello!"]))
    stream.finish()
    expected = ref.parse_response(_ids(tok, ["Hello!"]), TEMPLATE, prefix=leaky, tokenizer=tok)
    assert stream.message == expected and "SECRET" in expected["content"]


CHAT_TEMPLATES = [
    # Qwen-like: whitespace control, string constants with escapes, a loop over tools.
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' }}"
    "{%- if message.tool_calls %}{% for call in message.tool_calls %}\n<tool_call>\n"
    "{{- call | tojson }}\n</tool_call>{% endfor %}{% endif %}{{- '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>' }}"
    "{%- endif %}",
    # transformers' own `{% generation %}` tag, a comment that names a token, a raw block.
    "{# <tool_call> is written by the model #}{% for m in messages %}"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}</think>{% endgeneration %}"
    "{% else %}{{ m.content }}{% endif %}{% endfor %}{% raw %}<|im_end|>{% endraw %}",
    # A token only code spells (built from pieces), and blank-line tokens.
    "{% set open = '<' + 'tool_call>' %}{{ open }}\n\n{{ messages[0].content }}\n",
    "",
]


@pytest.mark.parametrize("chat_template", CHAT_TEMPLATES)
def test_control_tokens_of_a_tokenizer_before_5_25_follow_its_rule(chat_template, monkeypatch):
    """A serving engine's tokenizer may come from a transformers without `_get_control_tokens`:
    the rule chatparse applies then gives what 5.25's method gives, for the chat template's
    literal text and for a tokenizer that lists its control tokens."""
    from transformers.utils.chat_template_utils import _get_template_literal_text

    from chatparse.runtime import token_ids

    tok = _tokenizer("bytelevel")
    tok.add_tokens(["<tool_call>", "</tool_call>", "\n\n", "<unused>"])
    literals = set(token_ids.template_literal_text(chat_template).split("\0"))
    assert literals == set(_get_template_literal_text(chat_template).split("\0"))
    tok.chat_template = chat_template
    expected = {}
    for listed in (None, ["</tool_call>"]):
        tok.chat_control_tokens = listed
        added = tok.added_tokens_decoder.values()
        assert token_ids._control_tokens_before_5_25(tok, added, chat_template) == set(
            tok._get_control_tokens(chat_template)
        )
        expected[listed is None] = token_ids.control_tokens(tok)
    # The decoder's table, from a tokenizer class without the method.
    from transformers.tokenization_utils_base import PreTrainedTokenizerBase

    monkeypatch.delattr(PreTrainedTokenizerBase, "_get_control_tokens")
    assert not hasattr(tok, "_get_control_tokens")
    for listed in (None, ["</tool_call>"]):
        tok.chat_control_tokens = listed
        assert token_ids.control_tokens(tok) == expected[listed is None]


def test_a_template_default_keeps_its_own_marker_as_the_reference_keeps_it(tok):
    """The reference strips markers from what comes from the text (chunks, region values), not
    from the template's own strings: a default that holds U+FDD2 keeps it."""
    template = {**TEMPLATE, "defaults": {**TEMPLATE["defaults"], "note": "a\ufdd2b"}}
    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, ["Hello!"])
    expected = ref.parse_response(ids, template, prefix=prefix, tokenizer=tok)
    assert expected["note"] == "a\ufdd2b"
    assert chatparse.parse_response(ids, template, prefix=prefix, tokenizer=tok) == expected


def test_after_a_spelled_out_control_token_a_template_marker_is_stripped_too(tok):
    """The one difference the README names: once a marker is in play the whole message is
    stripped, so a default that writes U+FDD2 itself loses it, where the reference keeps it."""
    template = {**TEMPLATE, "defaults": {**TEMPLATE["defaults"], "note": "a\ufdd2b"}}
    prefix = _ids(tok, [("id", "<|im_start|>"), "assistant\n"])
    ids = _ids(tok, ["Hello <|im_end|> there"])  # spelled out: text, with markers stripped
    expected = ref.parse_response(ids, template, prefix=prefix, tokenizer=tok)
    got = chatparse.parse_response(ids, template, prefix=prefix, tokenizer=tok)
    assert got["content"] == expected["content"] == "Hello <|im_end|> there"
    assert (expected["note"], got["note"]) == ("a\ufdd2b", "ab")
