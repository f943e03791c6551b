"""Tool calls of xml-inline and kv-lines bodies, read while the body arrives.

In:  a tool-call field's template entry (`inline_plan_for`), then the raw body text of each of its
     regions (the parser's `region_chunk` texts) fed to an `InlineCalls`.
Out: `InlinePlan` (None when the field's calls go out whole, see below), and per region one
     `Slot` (json_calls): the call's name (the open's capture) and the json.dumps text of its
     arguments so far, built member by member.
Guaranteed: `text` only grows, and each piece is final unless the body breaks the format's rules
later (then the caller flags the call as diverged): for a body whose every tag closes (xml-inline)
and that repeats no key, `text` is a prefix of `json.dumps` of the call's final arguments, and
equal to it once `complete` (set by `finish`, at the region's close). A repeated key is written
where it comes, so json.loads of the text still gives the final arguments (the runtime's dict
keeps a key's first position and last value, as json.loads does).

When a piece is final:
- a member's key as soon as it is known: xml-inline, once the part of `tag_pattern` before
  `(?P<value>.*?)` has matched (no more text can change that match); kv-lines, once `kv_sep`
  arrives in the line;
- a string value (no `value_parser`, and `tools=` typing cannot cast it: the key has no schema
  type other than "string" for the call's tool) as it arrives, minus the text the value's end could
  still claim: xml-inline, the chars where the pattern's part after the value could still start
  (`\\n?</parameter>`: a trailing newline and a partial close tag); kv-lines, a partial
  `line_sep` and, with `strip`, trailing whitespace;
- any other value (typed, or parsed by `value_parser`) when its tag or line ends, written as the
  value the message gets (parsed, then coerced);
- with xml-inline's `value_parser_by`, each member's parser is the one its HEAD's capture picks
  (the group must be in HEAD), and nothing is coerced (5.25 leaves such a field's values as the
  parsers gave them);
- the closing "}" at the region's close.

A field streams when its transform is exactly `{"type": "function", "function": {"name": "{N}",
"arguments": "{content}"}}` with N a capture of the open, no `transform_each`, and: xml-inline
without `merge_duplicates` (a repeat would turn a value into a list) whose `tag_pattern` is
`HEAD(?P<value>.*?)TAIL` at its top level, with the `key` group in HEAD and both halves compiled to
DFAs, which the generated module declares (`TAG_HALVES`, split by compiler/planning/tag_halves.py: a TAIL
whose positive look-aheads end every path through it, `\\n?(?:</parameter>|(?=<parameter=)|\\Z)`,
gets the DFA of its form that reads them, and the tag's real end is read back with `regex` when
that DFA decides); kv-lines whose separators are
non-empty, neither inside the other, and `kv_sep` without whitespace at its edges when `strip` is
on. Why xml-inline is exact: `HEAD(?P<value>.*?)TAIL` at a start matches iff HEAD matches there
and TAIL matches somewhere after it, and then the value ends at the first place TAIL matches; so
the leftmost start where HEAD's match is decided, and then the leftmost start of TAIL, are the
tag's match, as long as a TAIL comes before the body ends (a tag left open when the region closes
is the divergence named above). Time: linear. Each char is stepped by the live runs of one half
(at most one run per state), again only when a decided match rewinds over the look-ahead it
needed (a char or so), or, while no run is alive, crossed by one C search for the next char a
match of that half may begin with (a value's text up to TAIL's first chars); a lone run crosses
the chars where a step would only change its state in one loop (`_Runs.advance`); text is kept as
the fed pieces and dropped whole, and kv-lines scans each char a bounded number of times
(tests/test_openai_deltas.py::test_inline_readers_are_linear_time).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring_ascii

from ..runtime.dfa_tables import END_OF_INPUT, class_pattern
from ..runtime.search import decided_match, start_run, step_runs
from .json_calls import Slot, _placeholder, name_capture_is_final

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_VALUE_GROUP = "(?P<value>.*?)"
_CASTS = frozenset({"integer", "number", "boolean", "null", "object", "array"})


@dataclass(frozen=True)
class InlinePlan:
    """How a streamable xml-inline or kv-lines field's calls are read."""

    kind: str  # "xml-inline" or "kv-lines"
    args: dict  # the field's content_args
    name_capture: str
    # xml-inline: the DFAs of HEAD and TAIL, TAIL's `regex` when its DFA consumes the look-aheads
    # that end it (compiler/planning/tag_halves.py), else None, and the search for where a TAIL
    # match may begin (`tag_halves`)
    halves: tuple[Any, Any, Any, Any] | None


def retypes(types: tuple[str, ...]) -> bool:
    """Whether `coerce_argument` can change a str value whose schema has these types."""
    return any(name in _CASTS for name in types)


def inline_plan_for(spec: dict, module: Any) -> InlinePlan | None:
    """The plan for a tool-call field's template entry (of the generated `module`), or None if its
    calls go out whole."""
    kind = spec.get("content", "text")
    if kind not in ("xml-inline", "kv-lines") or spec.get("transform_each"):
        return None
    args = spec.get("content_args") or {}
    transform = spec.get("transform")
    if not isinstance(args, dict) or not isinstance(transform, dict):
        return None
    function = transform.get("function")
    if set(transform) != {"type", "function"} or transform["type"] != "function":
        return None
    if not isinstance(function, dict) or set(function) != {"name", "arguments"}:
        return None
    name, arguments = _placeholder(function["name"]), _placeholder(function["arguments"])
    if arguments != ("content",) or name is None or len(name) != 1 or name == ("content",):
        return None
    if not name_capture_is_final(spec, name[0]):
        return None  # a close capture of that name would replace it (5.24)
    value_parser = args.get("value_parser")
    if value_parser is not None and not isinstance(value_parser, dict):
        return None
    if kind == "kv-lines":
        if "value_parser_by" in args:
            return None  # kv-lines ignores it, but 5.25 then skips tool-call coercion
        line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
        if not (isinstance(line_sep, str) and isinstance(kv_sep, str) and line_sep and kv_sep):
            return None
        if _overlap(line_sep, kv_sep) or _overlap(kv_sep, line_sep):
            return None  # an occurrence of one could overlap the other
        if args.get("strip", True) and kv_sep.strip() != kv_sep:
            return None
        return InlinePlan(kind, args, name[0], None)
    pattern = args.get("tag_pattern")
    if args.get("merge_duplicates") or not isinstance(pattern, str):
        return None
    halves = tag_halves(module, "tool_calls")
    if halves is None or not _by_head_capture(args.get("value_parser_by"), pattern):
        return None
    return InlinePlan(kind, args, name[0], halves)


def _by_head_capture(value_parser_by: Any, pattern: str) -> bool:
    """Whether a `value_parser_by` (if any) is well formed and names a group of HEAD, so that
    each member's parser is known when its key is (the runtime raises for any other shape)."""
    if value_parser_by is None:
        return True
    if not isinstance(value_parser_by, dict):
        return False
    group, parsers = value_parser_by.get("group"), value_parser_by.get("parsers")
    if not isinstance(group, str) or not isinstance(parsers, dict):
        return False
    if not all(parser is None or isinstance(parser, dict) for parser in parsers.values()):
        return False
    import regex

    head = pattern.split(_VALUE_GROUP)[0]
    return group in regex.compile(head, regex.DOTALL).groupindex


def tag_halves(module: Any, field: str) -> tuple[Any, Any, Any, Any] | None:
    """(HEAD, TAIL, rewind, TAIL's starts) of `field`'s xml-inline tag as the generated module
    declares them (`TAG_HALVES`, compiler/planning/tag_halves.py): HEAD and TAIL as runtime DFAs,
    TAIL's `regex` when its DFA consumes the look-aheads that end it, else None, and the compiled
    search for a char a TAIL match may begin with (the one the module declares for a TAIL that
    matches empty only at the end of the text, else TAIL's own candidates; None: anywhere); None
    when the module declares none (the tag does not split: see the module docstring)."""
    declared = getattr(module, "TAG_HALVES", {}).get(field)
    if declared is None:
        return None
    head, tail, rewind, starts = declared
    begins = class_pattern(starts) if starts is not None else tail.candidates
    return head, tail, (_rewind(rewind) if rewind is not None else None), begins


@lru_cache(maxsize=32)
def _rewind(pattern: str) -> Any:
    import regex

    return regex.compile(pattern, regex.DOTALL)


class _Runs:
    """Leftmost-first runs of one DFA over text that arrives char by char: runtime/search.py's
    `start_run` and `step_runs`, kept between feeds. `match` is (start, end) once decided."""

    __slots__ = ("dfa", "runs", "begins")

    def __init__(self, dfa: Any, begins: Any) -> None:
        self.dfa = dfa
        self.runs: list[list[int]] = []  # [start, state, end]: end -1 = no match yet
        # The search for the next char a match may begin with (None: any): with no run alive,
        # the text before it is crossed at once.
        self.begins = begins

    def step(self, position: int, ch: Any, prev: str) -> None:
        """Start a run at `position` (while none has matched, and where a match may begin),
        then step every run over `ch` (None: the end of the input)."""
        runs = self.runs
        if not (runs and runs[-1][2] >= 0):
            # A run from a char no match begins with dies on it (a match may be empty only at
            # the end of the input: `begins` is None for a delimiter that may match empty
            # elsewhere): started only where it may live.
            begins = self.begins
            if ch is None or begins is None or begins.match(ch) is not None:
                start_run(self.dfa, runs, position, prev)
            elif not runs:
                return
        self.runs = step_runs(self.dfa, runs, position, END_OF_INPUT if ch is None else ch)

    def advance(self, text: str, position: int, limit: int) -> int:
        """Step a lone run that has no match over `text` from `position` (to `limit` at most)
        while a step would only change its state: no match may begin at the char (`begins`, found
        by one C search), the state reports no match end, and the char neither kills the run nor
        settles it. Where it stops, the caller steps the char as usual; it returns that place."""
        runs = self.runs
        begins = self.begins
        if len(runs) != 1 or begins is None:
            return position
        run = runs[0]
        state = run[1]
        if not state or run[2] >= 0:
            return position
        found = begins.search(text, position, limit)
        stop = found.start() if found is not None else limit
        dfa = self.dfa
        ends, settled, next_state = dfa.ends, dfa.settled, dfa.next_state
        while position < stop and ends.get(state) is None:
            after = next_state(state, text[position])
            if not after or after in settled:
                break
            state = after
            position += 1
        run[1] = state
        return position

    @property
    def match(self) -> tuple[int, int] | None:
        return decided_match(self.runs)

    def live_start(self, default: int) -> int:
        """The earliest start a match may still have (`default` when no run is alive)."""
        return self.runs[0][0] if self.runs else default


class _Writer:
    """The json.dumps text of one arguments object, member by member, into a slot."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.members = 0

    def out(self, text: str) -> None:
        self.slot.add(text)

    def key(self, key: str) -> None:
        self.out(("{" if not self.members else ", ") + encode_basestring_ascii(key) + ": ")
        self.members += 1

    def piece(self, chars: str) -> None:
        if chars:
            self.out(encode_basestring_ascii(chars)[1:-1])

    def close(self) -> None:
        self.out("}" if self.members else "{}")
        self.slot.complete = True


class InlineCalls:
    """Reads one xml-inline or kv-lines region's body into its call's slot (see the module).

    `typed(name, key)`: whether `tools=` typing could change the str value of `key`;
    `coerce(name, key, value)`: that value after typing."""

    def __init__(
        self,
        plan: InlinePlan,
        name: str | None,
        typed: Callable[[str | None, str], bool | None],
        coerce: Callable[[str, str, Any], Any],
    ) -> None:
        self.plan = plan
        self.typed = typed
        self.coerce = coerce
        self.slots = [Slot(name)]
        self.slot = self.slots[0]
        self.writer = _Writer(self.slot)
        args = plan.args
        self.value_parser = args.get("value_parser")
        # value_parser_by (xml-inline): the group whose capture picks each member's parser
        by = args.get("value_parser_by")
        self.by_group: str | None = by["group"] if by is not None else None
        self.parsers_by_capture: dict = by["parsers"] if by is not None else {}
        self.member_parser: Any = self.value_parser  # the parser of the member being read
        self.strip = bool(args.get("strip", True))
        self.tail = ""  # kv-lines: the last chars, which may begin a separator
        self.line: list[str] = []  # kv-lines: a line's text before its key is known
        self.spaces: list[str] = []  # kv-lines: trailing whitespace that waits
        self.key: str | None = None  # the member being read
        self.held: list[str] | None = None  # a value written whole at its end
        self.leading = True  # kv-lines with strip: no char of the value sent yet
        if plan.kind == "xml-inline":
            assert plan.halves is not None
            self.head, self.tail, self.rewind, self.tail_begins = plan.halves
            self.parts: list[str] = []  # the body's text still needed, as fed
            self.starts: list[int] = []  # the body position of each part
            self.end = 0  # the body's length so far
            self.next = 0  # the body position of the next char to step
            self.runs = _Runs(self.head, self.head.candidates)
            self.value_start = -1  # while a value is read: where it starts; else -1
            self.sent = 0  # body position up to which the value went out
            self.prev = ""

    # --- shared -------------------------------------------------------------------------------

    def _member(self, key: str, groups: dict | None = None) -> None:
        slot = self.slot
        self.key = key
        if self.by_group is not None:
            assert groups is not None
            self.member_parser = self.parsers_by_capture.get(
                groups.get(self.by_group), self.value_parser
            )
            typed: bool | None = False  # no coercion with value_parser_by
        else:
            typed = self.typed(slot.name, key) if slot.name is not None else None
        self.writer.key(key)
        if self.member_parser is not None or typed is None or typed:
            self.held = []
        else:
            self.held = None
            self.writer.out('"')

    def _value_piece(self, chars: str) -> None:
        if self.held is not None:
            self.held.append(chars)
        else:
            self.writer.piece(chars)

    def _value_end(self) -> None:
        key, self.key = self.key, None
        if self.held is None:
            self.writer.out('"')
            return
        value: Any = "".join(self.held)
        self.held = None
        slot = self.slot
        try:
            if self.member_parser is not None:
                from ..runtime.content import parse_content

                parser = self.member_parser
                value = parse_content(parser.get("name", "text"), value, parser.get("args", {}))
            assert key is not None and slot.name is not None
            if self.by_group is None:
                value = self.coerce(slot.name, key, value)
            text = json.dumps(value)
        except Exception:  # noqa: BLE001 (the region's value raises: the caller handles it)
            slot.stopped = True
            return
        self.writer.out(text)

    def feed(self, text: str) -> None:
        if self.slot.stopped or not text:
            return
        if self.plan.kind == "kv-lines":
            self._kv_feed(text, final=False)
        else:
            self._xml_feed(text, final=False)

    def finish(self) -> None:
        """The body is complete: end what the end of the input ends, then close the object
        (unless a tag is still open: the call then diverges)."""
        if self.slot.stopped:
            return
        if self.plan.kind == "kv-lines":
            self._kv_feed("", final=True)
        else:
            self._xml_feed("", final=True)
            if self.value_start >= 0:
                return
        if not self.slot.stopped:
            self.writer.close()

    def plain_target(
        self,
    ) -> tuple[Callable[[str], Any] | None, Callable[[str], None], bool] | None:
        """Where a chunk of plain characters may go by itself (see JsonCalls.plain_target): where
        the search for a char that a TAIL match may begin with finds none in it, to `take_plain`,
        which sends it, in an xml-inline string value being sent as it arrives, no run of TAIL
        alive, and TAIL's first chars known; else None. After `_xml_feed`, all of the body is
        stepped, and with no run alive all of the value is sent. A chunk without such a char is
        all value text, final at once (no TAIL can start in it, and one that starts later ends
        the value after it), and json.dumps spells it as it is."""
        if (
            self.plan.kind != "xml-inline"
            or self.value_start < 0
            or self.held is not None
            or not self.slot.streaming
            or self.runs.runs
            or self.runs.begins is None
        ):
            return None
        return self.runs.begins.search, self.take_plain, True

    def take_plain(self, chunk: str) -> None:
        """Take `chunk`, as `plain_target` says: the reader's position moves over it as `_xml_feed`
        would, skipping to the next char a TAIL match may begin with, and the slot's text grows by
        it, as sent (the caller sends it)."""
        self.starts, self.parts = [self.end], [chunk]  # what `_trim` keeps: the last part
        self.end += len(chunk)
        self.next = self.sent = self.end
        self.prev = chunk[-1]
        self.slot.add_sent(chunk)

    # --- xml-inline ---------------------------------------------------------------------------

    def _xml_feed(self, text: str, final: bool) -> None:
        if text:
            self.starts.append(self.end)
            self.parts.append(text)
            self.end += len(text)
        end = self.end
        at_end = 0  # decisions made at the end of the input (each ends a tag half: few)
        while True:
            while self.next < end:
                index = bisect_right(self.starts, self.next) - 1
                part, offset = self.parts[index], self.starts[index]
                begins = self.runs.begins
                if not self.runs.runs and begins is not None:
                    # No run alive: none starts before the next char a match can begin with
                    # (a value's text up to a char TAIL can begin with: one C search).
                    found = begins.search(part, self.next - offset)
                    skip_to = offset + (found.start() if found is not None else len(part))
                    if skip_to > self.next:
                        self.prev = part[skip_to - offset - 1]
                        self.next = skip_to
                        continue
                limit = offset + len(part)
                runs = self.runs
                position, prev = self.next, self.prev  # (locals: a char costs less)
                decided = False
                while position < limit:
                    if len(runs.runs) == 1:  # a lone run crosses a tag's chars at once
                        local = position - offset
                        reached = runs.advance(part, local, limit - offset)
                        if reached > local:
                            position, prev = offset + reached, part[reached - 1]
                            if position == limit:
                                break
                    ch = part[position - offset]
                    runs.step(position, ch, prev)
                    prev = ch
                    position += 1
                    alive = runs.runs
                    if alive and alive[0][2] >= 0 and not alive[0][1]:  # `decided_match`
                        self.next, self.prev = position, prev
                        decided = self._decide()
                        break  # rewound: find the part again
                    if begins is not None and not alive:
                        break  # no run alive: skip ahead
                if not decided:
                    self.next, self.prev = position, prev
            if not final or self.slot.stopped or at_end > 2:
                break
            self.runs.step(end, None, self.prev)
            if not self._decide():
                break
            at_end += 1
        if self.value_start >= 0 and self.slot.streaming:
            safe = self.runs.live_start(end)
            if safe > self.sent:
                self._value_piece(self._text(self.sent, safe))
                self.sent = safe
        self._trim()

    def _text(self, start: int, end: int) -> str:
        """The body's text[start:end] (inside what the parts still hold)."""
        index = bisect_right(self.starts, start) - 1
        pieces = []
        while start < end:
            part, offset = self.parts[index], self.starts[index]
            piece = part[start - offset : end - offset]
            pieces.append(piece)
            start += len(piece)
            index += 1
        return "".join(pieces)

    def _rewind(self, position: int) -> None:
        self.next = position
        self.prev = self._text(position - 1, position) if position else ""

    def _decide(self) -> bool:
        """Act on a decided match of the running half; True if the position was rewound."""
        found = self.runs.match
        if found is None:
            return False
        start, end = found
        if self.value_start < 0:  # HEAD: a key, and the value starts where HEAD ends
            head = self.head
            window = max(start - 1, 0)  # one char before (for `\b`), then what was stepped
            text = self._text(window, self.next)
            groups = head.groups_reader(text, start - window, end - window)
            matched = groups.match(text, start - window)
            values = head.group_values(matched) if matched is not None else {}
            key = values.get("key")
            if matched is None or matched.end() != end - window or key is None:
                self.slot.stopped = True  # the reference raises, or disagrees: whole at close
                self.next = self.end
                return True
            self._member(key, values)
            self.value_start = self.sent = end
            self.runs = _Runs(self.tail, self.tail_begins)
        else:  # TAIL: the value ends where it starts
            if self.rewind is not None:  # a final look-ahead: the tag ends before its text
                window = max(start - 1, 0)
                real = self.rewind.match(self._text(window, self.next), start - window)
                if real is None or real.end() + window > end:
                    self.slot.stopped = True  # cannot happen (see tag_halves): whole at close
                    self.next = self.end
                    return True
                end = real.end() + window
            if start > self.sent:
                self._value_piece(self._text(self.sent, start))
            self._value_end()
            self.value_start = -1
            self.runs = _Runs(self.head, self.head.candidates)
        self._rewind(end)
        return True

    def _trim(self) -> None:
        """Drop the parts that no run, no pending value piece and no rewind needs (one char is
        kept before them, for `\b`)."""
        keep = min(self.runs.live_start(self.next), self.next)
        if self.value_start >= 0:
            keep = min(keep, self.sent)
        keep -= 1
        drop = 0
        while drop + 1 < len(self.parts) and self.starts[drop + 1] <= keep:
            drop += 1
        if drop:
            del self.parts[:drop], self.starts[:drop]

    # --- kv-lines -----------------------------------------------------------------------------

    def _kv_feed(self, text: str, final: bool) -> None:
        """Read the next text of a kv-lines body. What is kept between feeds is short: the last
        chars that may begin a separator (`tail`), the raw text of a line whose key is not known
        yet (`line`), and whitespace that `strip` may drop (`spaces`); each char is scanned a
        bounded number of times."""
        args = self.plan.args
        line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
        text, self.tail = self.tail + text, ""
        while not self.slot.stopped:
            line_end = text.find(line_sep)
            if self.key is None:
                found = text.find(kv_sep)
                if found >= 0 and (line_end < 0 or found < line_end):
                    key = "".join(self.line) + text[:found]
                    self.line = []
                    self._member(key.strip() if self.strip else key)
                    self.leading, self.spaces = True, []
                    text = text[found + len(kv_sep) :]
                    continue
                if line_end >= 0:  # a line without kv_sep: skipped
                    self.line = []
                    text = text[line_end + len(line_sep) :]
                    continue
                if final:
                    self.line = []
                    return
                keep = max(len(kv_sep), len(line_sep)) - 1
                cut = max(len(text) - keep, 0)
                self.line.append(text[:cut])
                self.tail = text[cut:]
                return
            if line_end >= 0 or final:
                self._kv_ready(text[:line_end] if line_end >= 0 else text)
                self._value_end()
                if line_end < 0:
                    return
                text = text[line_end + len(line_sep) :]
                continue
            keep = _partial_length(text, line_sep)
            self._kv_ready(text[: len(text) - keep])
            self.tail = text[len(text) - keep :]
            return

    def _kv_ready(self, chars: str) -> None:
        """Value chars that are final text of the line: with `strip`, leading whitespace is
        dropped and trailing whitespace waits for a later non-space char (dropped at the end)."""
        if not self.strip:
            self._value_piece(chars)
            return
        if self.leading:
            chars = chars.lstrip()
            if not chars:
                return
            self.leading = False
        kept = chars.rstrip()
        if not kept:
            self.spaces.append(chars)
            return
        self._value_piece("".join(self.spaces) + kept)
        self.spaces = [chars[len(kept) :]]


def _partial_length(text: str, sep: str) -> int:
    """The length of the longest proper prefix of `sep` that `text` ends with."""
    for length in range(min(len(sep) - 1, len(text)), 0, -1):
        if text.endswith(sep[:length]):
            return length
    return 0


def _overlap(first: str, second: str) -> bool:
    """Whether `second` holds `first`, or an end of `first` begins `second`."""
    if first in second:
        return True
    return any(first.endswith(second[:k]) for k in range(1, min(len(first), len(second))))


__all__ = ["InlineCalls", "InlinePlan", "inline_plan_for", "retypes", "tag_halves"]
