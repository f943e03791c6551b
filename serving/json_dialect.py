"""A json dialect body (`string_delims`, `unquoted_keys`) read as the JSON text json.loads reads.

In:  the raw body of one region in chunks (`DialectReader.feed`, then `finish`), and the field's
     dialect: one [open, close] pair of custom string quotes (Gemma 4's `<|"|>`, FunctionGemma's
     `<escape>`), or none, and whether bare keys are quoted.
Out: the calls of a `JsonReader` (see json_reader) on `sink`, for the text that `parse_json`'s
     rewrite (runtime/content.py) makes of the whole body: each custom-quoted string becomes the
     JSON string of its characters, each bare key after `{` or `,` becomes a quoted one.
Guaranteed: whenever json.loads accepts the rewrite of the whole body, the text this reader has
given its JsonReader so far is a prefix of that rewrite, so each token it reports holds. A piece
is passed on only once no later text can change its rewrite:
- a possible start of a delimiter at the end of a chunk is held (`<|"` may become `<|"|>`);
- a bare word where a key may stand (the reader is after `{` or `,` in an object) is held until
  `:` comes (it is a key: quoted) or anything else does (it is not: passed as it is);
- the characters of a custom-quoted string go on as they arrive, encoded as json.dumps encodes
  them. The rewrite leaves a quote that never closes as it is, and the open quote of either
  dialect starts with `<`, which no JSON text holds outside a string: at a key or value position
  an unclosed quote means the whole body does not parse, so its string can be read as one that
  closes. `dialect_for` refuses a quote that starts with a character JSON text can hold there.
What this reader cannot tell as the text arrives, it gives up on (the sink's `fail()`: the call
then goes out whole from its final value): a custom quote inside a standard "..." string, where
the rewrite depends on whether a closing quote ever comes, and a body holding the rewrite's
reserved characters \\x01 and \\x02 (parse_json refuses it). More than one pair of quotes, or
`allow_non_json`, is not read at all (`dialect_for` returns None).

Why the reader's view of the text is the rewrite's: the rewrite skips a standard string whole
(`"(?:\\\\.|[^"\\\\])*"`), as JSON reads it wherever json.loads accepts the result (a string the
rewrite finds unterminated is left unterminated, or is cut by a quoted key after it, which a key's
word then follows: neither parses), and it quotes `\\s*\\w+\\s*:` only right after `{` or `,`:
after `{` or `,` in an object the reader expects a key; after `,` in an array a quoted key does not
parse, so there the word goes on as it is. Characters are classed by `regex`'s `\\w` and `\\s`, as
the rewrite's are.
"""

from __future__ import annotations

import re
from functools import lru_cache
from json.encoder import encode_basestring_ascii

from ..runtime._lazy import compiled
from .json_reader import JsonReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Characters that may begin a JSON token at a key or value position, or be whitespace there. A
# custom quote starting with one of them could be text the rewrite leaves as it is.
_JSON_STARTS = frozenset('"{}[]-0123456789tfnNI:, \t\n\r')
_RESERVED = ("\x01", "\x02")  # the rewrite's token characters (runtime/content.py)


def dialect_for(args: dict) -> tuple[tuple[str, str] | None, bool] | None:
    """(the custom quote pair or None, unquoted_keys) for a json field's `content_args` with a
    dialect this reader follows; None when there is no dialect or one it cannot follow."""
    if args.get("allow_non_json"):
        return None
    keys = args.get("unquoted_keys", False)
    delims = args.get("string_delims", [])
    if type(keys) is not bool or type(delims) is not list:
        return None
    if not delims:
        return (None, True) if keys else None
    if len(delims) != 1:
        return None  # pairs rewrite one another's output: not followed
    pair = delims[0]
    if type(pair) not in (list, tuple) or len(pair) != 2:
        return None
    open_quote, close_quote = pair
    if type(open_quote) is not str or type(close_quote) is not str:
        return None
    if not open_quote or not close_quote or open_quote[0] in _JSON_STARTS:
        return None
    if compiled(r"[\w\s]").match(open_quote[0]):
        return None
    if any(reserved in open_quote + close_quote for reserved in _RESERVED):
        return None
    return (open_quote, close_quote), keys


def _partial(text: str, delimiter: str) -> int:
    """The length of the longest end of `text` that begins `delimiter` (without completing it)."""
    if delimiter[0] not in text[1 - len(delimiter) :]:
        return 0  # (the common case: no character of the end can begin it)
    for size in range(min(len(delimiter) - 1, len(text)), 0, -1):
        if text.endswith(delimiter[:size]):
            return size
    return 0


@lru_cache(maxsize=64)
def _char_search(char: str) -> Callable[[str], Any]:
    """The `search` of a pattern that finds `char` (a reader is made per call body)."""
    return re.compile(re.escape(char)).search


class DialectReader:
    """Rewrites a dialect body as it arrives and reads the result with a `JsonReader`."""

    def __init__(self, sink: Any, quotes: tuple[str, str] | None, unquoted_keys: bool) -> None:
        self.json = JsonReader(sink)
        self.path = self.json.path  # the JsonReader's own list (it changes it in place)
        self._open, self._close = quotes or ("", "")
        # (`plain_stops`: a search for the first char of the custom quote that would start a
        # string outside one, and of the one that ends it inside one; compiled once per quote)
        self._opens = _char_search(self._open[0]) if self._open else None
        self._closes = _char_search(self._close[0]) if self._close else None
        self._keys = unquoted_keys
        self._held = ""  # raw text that may be the start of a quote
        self._quoted = False  # inside a custom-quoted string
        self._word: list[str] | None = None  # a bare word where a key may stand, held
        self._after_word: list[str] | None = None  # the whitespace after it, once it ended

    @property
    def plain_run(self) -> str | None:
        """Where a run of plain characters would go (see JsonReader.plain_run), with nothing held:
        a run in which `plain_stops` finds nothing then goes to `take_plain`."""
        if self._held or self._word is not None:
            return None
        return self.json.plain_run

    def take_plain(self, chars: str) -> None:
        """Read `chars` (plain characters, without a `plain_stops` char, while `plain_run`) as `feed`
        reads them: they are their own rewrite, inside a standard or a custom-quoted string."""
        self.json.take_plain(chars)

    @property
    def plain_stops(self) -> Callable[[str], Any] | None:
        """While `plain_run`: a search that finds nothing in a chunk of plain characters
        (`is_plain_ascii`) that is the rewrite's text as it is, changing no state (None: every
        such chunk is). Such a chunk holds no character that may begin the quote that would end
        or start a custom-quoted string here (json.dumps spells plain characters as they are, and
        they are no key's)."""
        return self._closes if self._quoted else self._opens

    def feed(self, text: str) -> None:
        if self.json.failed:
            return
        if not self._open:
            self._outside(text)
            return
        if _RESERVED[0] in text or _RESERVED[1] in text:
            self.json.fail()  # parse_json refuses the body
            return
        text = self._held + text
        while not self.json.failed:
            if self._quoted:
                rest = self._up_to(text, self._close, self._string)
                if rest is None:
                    return
                self.json.feed('"')
                self._quoted = False
            else:
                rest = self._up_to(text, self._open, self._outside)
                if rest is None:
                    return
                self._begin_quoted()
            text = rest

    def _up_to(self, text: str, quote: str, take: Any) -> str | None:
        """Give `take` the text before the first `quote` in `text` and return the text after it;
        with no `quote` in `text`, give it all but an end that may begin one, hold that end, and
        return None."""
        found = text.find(quote)
        if found < 0:
            keep = _partial(text, quote)
            take(text[: len(text) - keep])
            self._held = text[len(text) - keep :]
            return None
        take(text[:found])
        return text[found + len(quote) :]

    def finish(self) -> None:
        """The body is complete: what is held is what it is (an unclosed quote's text is not
        JSON, and the reader fails on it)."""
        if self.json.failed:
            return
        held, self._held = self._held, ""
        if self._quoted:
            self.json.fail()  # the rewrite leaves the quote as it is: `<` where a value stands
            return
        if held:
            self._outside(held)
        self._end_word(None)
        self.json.finish()

    # --- custom-quoted strings ----------------------------------------------------------------

    def _begin_quoted(self) -> None:
        self._end_word(None)  # a word a quote follows is no key: the rewrite leaves it as it is
        if self.json.failed:
            return
        if self.json.in_string:
            # Inside a standard string: the rewrite turns the quote into a string if a closing
            # quote ever comes (the standard string then ends there), else leaves it as text of
            # the standard string. Not known until the end: the call goes out whole.
            self.json.fail()
            return
        self.json.feed('"')
        self._quoted = True

    def _string(self, chars: str) -> None:
        if chars:
            self.json.feed(encode_basestring_ascii(chars)[1:-1])

    # --- bare keys ----------------------------------------------------------------------------

    def _outside(self, text: str) -> None:
        """Text outside custom quotes: bare keys quoted where the rewrite quotes them."""
        if not self._keys:
            self.json.feed(text)
            return
        reader = self.json
        position, length = 0, len(text)
        while position < length and not reader.failed:
            if self._word is not None:
                position = self._read_word(text, position)
            elif reader.in_string:
                # The rewrite skips a standard string whole: up to the next quote (an escaped one
                # leaves the reader in the string, and the loop goes on).
                end = text.find('"', position)
                end = length if end < 0 else end + 1
                reader.feed(text[position:end])
                position = end
            elif reader.expects_key:
                space = compiled(r"\s*").match(text, position).end()
                if space > position:
                    reader.feed(text[position:space])
                    position = space
                elif compiled(r"\w").match(text, position):
                    self._word, self._after_word = [], None
                else:
                    reader.feed(text[position])
                    position += 1
            else:
                # Up to and including the next character after which a key or a string may start.
                found = compiled(r'[{,"]').search(text, position)
                end = length if found is None else found.end()
                reader.feed(text[position:end])
                position = end

    def _read_word(self, text: str, position: int) -> int:
        """Read on a held word (`\\w+`, then `\\s*`); at the character after them, end it."""
        assert self._word is not None
        if self._after_word is None:  # still in the word
            end = compiled(r"\w*").match(text, position).end()
            self._word.append(text[position:end])
            if end == len(text):
                return end
            self._after_word, position = [], end
        end = compiled(r"\s*").match(text, position).end()
        self._after_word.append(text[position:end])
        if end == len(text):
            return end
        self._end_word(text[end])
        return end + 1 if text[end] == ":" else end

    def _end_word(self, following: str | None) -> None:
        """The held word ends before `following` (None: before a quote or the body's end): a key
        when that is ":", quoted; else the rewrite leaves it, and the reader gets it as it is."""
        if self._word is None:
            return
        word, space = "".join(self._word), "".join(self._after_word or ())
        self._word, self._after_word = None, None
        if following == ":":
            self.json.feed('"' + word + '"' + space + ":")
        else:
            self.json.feed(word + space)


__all__ = ["DialectReader", "dialect_for"]
