"""Token-id input: generated ids in, the text the parser scans out, with spelled-out control tokens
defused (transformers 5.25 `chat_parsing.token_ids`).

In: a fast tokenizer (read through its attributes; transformers is never imported) and id chunks.
Out: text chunks whose concatenation does not depend on how the ids were cut. A control token
generated as its id decodes to its spelling and still matches delimiters; the same spelling
decoded from ordinary tokens gets `MARKER` between its characters, so no delimiter matches it,
and `strip_markers` removes the marker from every event and value.

This is a layer above the text engine: `TokenIdParser` wraps a text `RegionParser`, which never
sees an id. Cost: each chunk costs its length plus the held tail, which is shorter than the
longest control token, so a long run of text that could still become one stays linear.
"""

from __future__ import annotations

import re
import weakref
from functools import lru_cache
from itertools import groupby
from typing import Any

# A noncharacter, which Unicode reserves for internal use, so model output never contains it
# (the reference's `token_ids.MARKER`).
MARKER = "\ufdd2"


def strip_markers(value: Any) -> Any:
    """`value` with every MARKER removed, through lists and dicts (keys too), as the reference's
    `strip_markers`."""
    if isinstance(value, str):
        return value.replace(MARKER, "") if MARKER in value else value
    if isinstance(value, list):
        return [strip_markers(item) for item in value]
    if isinstance(value, dict):
        return {strip_markers(key): strip_markers(item) for key, item in value.items()}
    return value


def control_tokens(tokenizer: Any) -> dict[int, str]:
    """Id -> spelling of the tokens `apply_chat_template(..., sanitize_control_tokens=True)`
    protects, over every chat template the tokenizer has (a dict of named ones, one, or none).
    The tokenizer's own `_get_control_tokens` decides (transformers 5.25); one from an older
    transformers (a serving engine's) has none, and the same rule is applied here."""
    chat_template = getattr(tokenizer, "chat_template", None)
    templates = (
        list(chat_template.values()) if isinstance(chat_template, dict) else [chat_template or ""]
    )
    # (read once: the property builds a dict of every added token from the backend each time,
    # some 66 us for 300 added tokens)
    decoder = tokenizer.added_tokens_decoder
    listed = getattr(tokenizer, "_get_control_tokens", None)
    if listed is None:
        listed = lambda template: _control_tokens_before_5_25(  # noqa: E731
            tokenizer, decoder.values(), template
        )
    spellings = {token for template in templates for token in listed(template)}
    return {
        token_id: added.content for token_id, added in decoder.items() if added.content in spellings
    }


def _control_tokens_before_5_25(tokenizer: Any, added: Any, chat_template: str) -> set[str]:
    """transformers 5.25's control tokens for a tokenizer that predates it, among its `added`
    tokens: the special ones and those in `chat_control_tokens` when the tokenizer lists them, else
    the special ones and those (not whitespace) that the chat template's literal text contains."""
    named = getattr(tokenizer, "chat_control_tokens", None)
    if named is not None:
        return {token.content for token in added if token.special or token.content in set(named)}
    text = template_literal_text(chat_template)
    return {
        token.content
        for token in added
        if token.special or (token.content in text and not token.content.isspace())
    }


@lru_cache(maxsize=16)
def template_literal_text(chat_template: str) -> str:
    """The literal strings of a chat template (its text outside tags, and its string constants)
    joined with NUL, as transformers 5.25 reads them. Read by jinja2's lexer with the chat
    templates' options, so a tag only transformers' environment knows (`{% generation %}`)
    needs no extension; without jinja2, or for a template it cannot read, the whole template
    text, which contains them all (an added token then also counts where only code or a
    comment spells it). Kept per template, as transformers keeps it: a server's parser is built
    per request, and lexing a chat template of a few KB takes milliseconds."""
    try:
        from jinja2 import Environment

        lexer = Environment(trim_blocks=True, lstrip_blocks=True).lexer
        tokens = lexer.tokenize(chat_template)
        return "\0".join({token.value for token in tokens if token.type in ("data", "string")})
    except Exception:  # noqa: BLE001 (no jinja2, or a template it cannot read)
        return chat_template


def as_ids(ids: Any) -> list[int]:
    """A list of ints from a list, a numpy array or a torch tensor (what `to_py_obj` accepts)."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    return [int(token_id) for token_id in ids]


@lru_cache(maxsize=64)
def _defuser_tables(spellings: frozenset[str]) -> tuple[re.Pattern, frozenset[str], int, frozenset]:
    """A `Defuser`'s tables for a tokenizer's control-token spellings, built once per set (a
    server builds a parser per request): the pattern, every proper prefix of a spelling, the
    longest of them, and the chars a spelling begins with (where a spelling or a held tail may)."""
    # Longest first, so a token wins over the tokens it contains (the reference's alternation).
    ordered = sorted(spellings, key=lambda s: (-len(s), s))
    pattern = re.compile("|".join(map(re.escape, ordered)) or "(?!)")
    prefixes = frozenset(s[:n] for s in ordered for n in range(1, len(s)))
    return pattern, prefixes, max(map(len, prefixes), default=0), frozenset(s[0] for s in ordered)


class Defuser:
    """Puts MARKER between the characters of every control-token spelling in a text that arrives
    in pieces, holding back the shortest tail that could still become one."""

    def __init__(self, spellings: list[str]) -> None:
        tables = _defuser_tables(frozenset(spellings))
        self._pattern, self._prefixes, self._longest, self.firsts = tables
        self.tail = ""  # the text held back: it may still become a spelling

    def push(self, text: str, final: bool = False) -> str:
        if not self.tail and self.firsts.isdisjoint(text):
            return text  # (no spelling can begin in it: nothing to defuse or hold)
        text, self.tail = self.tail + text, ""
        if not final:
            hold = 0
            for length in range(min(self._longest, len(text)), 0, -1):
                if text[-length:] in self._prefixes:
                    hold = length
                    break
            cut = len(text) - hold
            if hold:
                # A spelling that straddles the cut is held whole, so it is defused whole later.
                for match in self._pattern.finditer(text, max(0, cut - self._longest)):
                    if match.start() < cut < match.end():
                        cut = match.start()
                        break
            text, self.tail = text[:cut], text[cut:]
        return self._pattern.sub(lambda match: MARKER.join(match.group()), text)


# Per tokenizer whose decoder reads each token on its own (`_texts_alone`): the text of an
# ordinary id decoded after complete characters, kept as `DecodeStream` gives it, at most
# ALONE_MAX ids (a vocabulary's worth). A server's tokens recur, so most ids are a lookup.
_ALONE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
ALONE_MAX = 1 << 18


def _texts_alone(tokenizer: Any) -> dict[int, str] | None:
    """The shared id -> text table of `tokenizer`, when its decoder is byte-level BPE's alone: an
    id then decodes to its own bytes, whatever ids came before, once those end a character
    (`DecodeStream.step` returns the same text after any of them, so the stream can be left
    behind while it is not needed: its window then still decodes to the prefix it kept). Other
    decoders read context (Metaspace strips the space that starts a sequence): None."""
    from tokenizers import decoders

    if type(tokenizer.backend_tokenizer.decoder) is not decoders.ByteLevel:
        return None
    try:
        return _ALONE.setdefault(tokenizer, {})
    except TypeError:  # a tokenizer that cannot be weakly referenced: no table
        return None


# Per tokenizer and set of control spellings: the texts of `_texts_alone` that are quiet, where
# no spelling can begin (none of their chars is a spelling's first) and without MARKER. Fed after
# complete characters with nothing held back, such an id's text is what the parser reads, as it
# is: `TokenIdParser.feed` looks it up and goes straight to the text parser.
_QUIET: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NO_TEXTS: dict[int, str] = {}  # (`TokenIdDecoder.quiet` while a char is pending or text held)


def _quiet_texts(tokenizer: Any, spellings: frozenset[str]) -> dict[int, str]:
    return _QUIET.setdefault(tokenizer, {}).setdefault(spellings, {})


class TokenIdDecoder:
    """Id chunks -> text chunks for the parser (see the module docstring)."""

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers.decoders import DecodeStream  # optional dependency: only for id input

        self._new_stream = lambda: DecodeStream(skip_special_tokens=False)
        self._control = control_tokens(tokenizer)
        self._backend = tokenizer.backend_tokenizer
        self._stream = self._new_stream()
        self._pending: list[int] = []  # ids that end inside a multi-byte character
        self._defuser = Defuser(list(self._control.values()))
        self._alone = _texts_alone(tokenizer)
        self._quiet: dict[int, str] | None = None
        if self._alone is not None:
            self._quiet = _quiet_texts(tokenizer, frozenset(self._control.values()))
        self.quiet: dict[int, str] = _NO_TEXTS
        self._settle()

    def _settle(self) -> None:
        """`quiet`: the quiet texts (`_quiet_texts`) while no char is pending and the defuser
        holds nothing, else none. An id found there decodes to the text the parser reads, as it
        is, and leaves the decoder's state as it was (`TokenIdParser.feed` reads it without
        calling `feed`)."""
        quiet = self._quiet
        self.quiet = _NO_TEXTS if quiet is None or self._pending or self._defuser.tail else quiet

    def feed(self, ids: list[int]) -> str:
        text = self._feed(ids)
        self._settle()
        return text

    def _feed(self, ids: list[int]) -> str:
        if len(ids) == 1 and ids[0] not in self._control:
            # The commonest chunk, a server's step of one ordinary id: a lookup where the
            # tokenizer's ids decode alone (`_texts_alone`), after complete characters, and this
            # one was seen; else one decoding step, given the id as an int (`step` takes a list
            # some 0.7 us slower).
            alone = self._alone if not self._pending else None
            if alone is not None:
                text = alone.get(ids[0])
                if text is not None:
                    self._note_quiet(ids[0], text)
                    return self._defuser.push(text)
            decoded = self._stream.step(self._backend, ids[0])
            if decoded is not None and alone is not None and len(alone) < ALONE_MAX:
                alone[ids[0]] = decoded
                self._note_quiet(ids[0], decoded)
        elif self._control.keys().isdisjoint(ids):
            # Ordinary ids only (tested in C): one decoding step.
            if not ids:
                return ""
            decoded = self._stream.step(self._backend, ids)
        else:
            return self._feed_control(ids)
        if decoded is None:
            self._pending += ids
            return ""
        if self._pending:
            self._pending = []
        return self._defuser.push(decoded)

    def _note_quiet(self, token_id: int, text: str) -> None:
        """Keep `text`, the text of `token_id` decoded after complete characters, among the quiet
        texts if it is one."""
        quiet = self._quiet
        if (
            quiet is not None
            and len(quiet) < ALONE_MAX
            and self._defuser.firsts.isdisjoint(text)
            and MARKER not in text
        ):
            quiet[token_id] = text

    def _feed_control(self, ids: list[int]) -> str:
        """`feed` of ids among which a control token's: runs of ordinary ids decode as above,
        each control id is its spelling (which releases a character held incomplete before it)."""
        out = []
        for is_control, run in groupby(ids, self._control.__contains__):
            if is_control:
                for token_id in run:
                    spelling = self._control[token_id]
                    # The control id also releases a character held incomplete before it.
                    text = self._stream.step(self._backend, token_id) or ""
                    out.append(self._defuser.push(text.removesuffix(spelling), final=True))
                    out.append(spelling)
                self._pending = []
                continue
            ordinary = list(run)
            decoded = self._stream.step(self._backend, ordinary)
            if decoded is None:
                self._pending += ordinary
            else:
                self._pending = []
                out.append(self._defuser.push(decoded))
        return "".join(out)

    def flush(self) -> str:
        """Everything held back; later ids decode as a new sequence (as `decode` of the output)."""
        text = (
            self._backend.decode(self._pending, skip_special_tokens=False) if self._pending else ""
        )
        self._stream, self._pending = self._new_stream(), []
        text = self._defuser.push(text, final=True)
        self._settle()
        return text


class TokenIdParser:
    """A text parser fed through a `TokenIdDecoder`; events and the message lose their markers.

    Markers are stripped once the parser has been given one (`_marked`): a spelled-out control
    token is rare, and until one comes no event or value of the text holds a marker. The
    reference strips what comes from the text (chunks and region values) and leaves the
    template's own strings (defaults) as they are: so does this parser until a marker comes,
    then it strips the whole message (a template that writes U+FDD2 itself loses it then)."""

    def __init__(self, text_parser: Any, prefix: Any, tokenizer: Any, **options: Any) -> None:
        self._decoder = TokenIdDecoder(tokenizer)
        if isinstance(prefix, str):
            prefix = tokenizer.encode(prefix, add_special_tokens=False)
        if prefix is not None:
            prefix = self._decoder.feed(as_ids(prefix)) + self._decoder.flush()
        # The prefix as the text parser reads it: decoded, spelled-out control tokens defused.
        self.prefix_text: str | None = prefix
        self._marked = prefix is not None and MARKER in prefix
        self._parser = text_parser(prefix, **options)
        self.initial_events = strip_markers(self._parser.initial_events)

    def feed(self, ids: Any) -> list:
        if type(ids) is list and len(ids) == 1:
            # The commonest chunk, a server's step of one id, seen before and quiet (see
            # `TokenIdDecoder.quiet`): its text as the text parser reads it.
            text = self._decoder.quiet.get(ids[0])
            if text is not None:
                events = self._parser.feed(text)
                return strip_markers(events) if self._marked else events
        elif type(ids) is not list:  # (a list goes to the decoder as it is, which takes its ints)
            if isinstance(ids, str):
                raise TypeError(
                    "This parser was created with a `tokenizer`, so `feed` takes token ids, not "
                    "text."
                )
            ids = as_ids(ids)
        text = self._decoder.feed(ids)
        if MARKER in text:
            self._marked = True
        events = self._parser.feed(text)
        return strip_markers(events) if self._marked else events

    def finalize(self) -> tuple[dict, list]:
        text = self._decoder.flush()
        if MARKER in text:
            self._marked = True
        events = self._parser.feed(text)
        message, last = self._parser.finalize()
        if not self._marked:
            return message, events + last
        return strip_markers(message), strip_markers(events + last)


__all__ = ["MARKER", "TokenIdDecoder", "TokenIdParser", "strip_markers"]
