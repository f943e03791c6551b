r"""Adversarial outputs for a response template, built from its own delimiters.

For every region of a template (the implicit field's, and each explicit field's once its open has
matched) and every delimiter watched there, the delimiter's automaton gives the shapes that make a
matcher work hardest without ever completing a match. `s` ranges over the start states and every
state with a self-loop, `w(s)` is the shortest input that reaches `s`:

- **lead runs**: `w(s)`, then a long run of a char `s` loops on (`\s*`, `\n*`, `[^>]*`, `.*?`),
  then nothing (the run ends the text, or the next shape begins) or the shortest rest of a match
  cut one char short and a char that kills it there (`" " * n + "<tool_call>" + "\n"`,
  `"<tool_call>" + " " * n + "<function=a" + "\n"`);
- **repeated partial delimiters**: `w(s)`, then the path from `s` to some live state repeated
  (`"<tool_call" * k`, `"<a<a<a..."` for `<a[^>]*>`, `"</parameter" * k` inside a lazy `.*?`, a
  literal that overlaps itself): every start in the text is a candidate, and each candidate's run
  reads far before it dies.

The automaton is the runtime's tables of the delimiter (`Delimiter.classes`, `rows`, `ends`,
`starts`). A delimiter on the `regex` fallback has none, so it gets the compiler's automaton of the
same pattern with each look-ahead read as part of the match and each negative look-around and
look-behind dropped: the literal parts, loops and partial matches are the same.

`Adversary(module)` holds the shapes of every region (`regions`) and of the start anchor; `text(
label, n)` builds a region's output with each shape about `n` chars long, `prefix(n)` a prefix
of partial start anchors, the anchor, and the home region's shapes (the prefix path).
"""

from __future__ import annotations

from chatparse.compiler.automata.region_automaton import compile_dfa
from chatparse.compiler.frontend.symbolic_charclass import concrete

# Representatives tried first for a class: what models write.
_PREFERRED = " \nax0<>=|/{}[]\"'_-:.,;"
_KILLERS = " \nx#~"


def _representative(charset) -> str | None:
    """A char of the class, None when it has none (a class the tables leave empty: `SPACE & ｜`)."""
    for ch in _PREFERRED:
        if ch in charset:
            return ch
    return chr(charset.first) if charset else None


def without_look_around(pattern: str) -> str:
    """`(?=X)` -> `(?:X)`; `(?!X)`, `(?<=X)`, `(?<!X)` -> nothing (escapes and classes respected)."""
    out = []
    i = 0
    while i < len(pattern):
        opener = next((o for o in ("(?=", "(?!", "(?<=", "(?<!") if pattern.startswith(o, i)), None)
        if opener is None:
            step = 2 if pattern[i] == "\\" else 1
            out.append(pattern[i : i + step])
            i += step
            continue
        depth, j, in_class = 0, i, False
        while j < len(pattern):
            ch = pattern[j]
            if ch == "\\":
                j += 2
                continue
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if opener == "(?=":
            out.append("(?:" + without_look_around(pattern[i + 3 : j]) + ")")
        i = j + 1
    return "".join(out)


class _Concrete:
    """The compiler's `DeterminizedDfa` with its symbolic classes made the runtime sets they stand for
    under the `regex` installed here (chars are looked up in them)."""

    def __init__(self, dfa) -> None:
        self.classes = [concrete(charset) for charset in dfa.classes]
        self.rows, self.ends, self.starts = dfa.rows, dfa.ends, dfa.starts


class _Tables:
    """A runtime `Delimiter`'s tables, read like the compiler's `DeterminizedDfa`."""

    def __init__(self, delimiter) -> None:
        self.classes = delimiter.classes
        self.rows = delimiter.rows
        self.ends = [delimiter.ends.get(state) for state in range(len(delimiter.rows))]
        self.starts = delimiter.starts


class DelimiterShapes:
    """The shapes of one delimiter, as recipes (head, unit, tail): `head + unit * k + tail`."""

    def __init__(self, delimiter) -> None:
        if delimiter.fallback:
            self.dfa = _Concrete(compile_dfa(without_look_around(delimiter.pattern)))
        else:
            self.dfa = _Tables(delimiter)
        # A class of the compiler's that holds no char under the tables here (`｜` as a word
        # char) has no representative, and its edges are never taken.
        self.chars = [_representative(c) if c else None for c in self.dfa.classes]
        self.recipes = self._recipes()

    def _class_id(self, ch: str) -> int:
        return next(i for i, charset in enumerate(self.dfa.classes, 1) if ch in charset)

    def _paths_from(self, state: int) -> dict[int, str]:
        """The shortest path (in representatives) from `state` to every state it reaches."""
        found = {state: ""}
        frontier = [state]
        while frontier:
            following = []
            for s in frontier:
                for class_id, target in sorted(self.dfa.rows[s].items()):
                    if target and target not in found and self.chars[class_id - 1] is not None:
                        found[target] = found[s] + self.chars[class_id - 1]
                        following.append(target)
            frontier = following
        return found

    def _loop_chars(self, state: int) -> list[str]:
        chars = {self.chars[c - 1] for c, t in self.dfa.rows[state].items() if t == state} - {None}
        return sorted(chars, key=lambda ch: (_PREFERRED.find(ch) % 100, ch))[:2]

    def _near_miss(self, state: int) -> str | None:
        """From `state`, the shortest way to a match end cut one char short, then a char that
        kills the run there; None when there is no such char."""
        paths = self._paths_from(state)
        ending = sorted((len(p), p) for s, p in paths.items() if self.dfa.ends[s] is not None)
        if not ending or not ending[0][1]:
            return None
        near = ending[0][1][:-1]
        s = state
        for ch in near:
            s = self.dfa.rows[s].get(self._class_id(ch), 0)
        for ch in _KILLERS:
            if s and self.dfa.ends[s] is None and self.dfa.rows[s].get(self._class_id(ch), 0) == 0:
                return near + ch
        return None

    def _recipes(self) -> list[tuple[str, str, str]]:
        dfa = self.dfa
        witness: dict[int, str] = {}
        for start in sorted(set(dfa.starts) - {0}):
            for s, path in self._paths_from(start).items():
                if s not in witness or len(path) < len(witness[s]):
                    witness[s] = path
        # A state that reports a match end whatever follows is a whole match already
        # (`</think>\s*`'s loop); one that reports it before some chars only (`a+$`) is not.
        looping = sorted(s for s in witness if self._loop_chars(s) and type(dfa.ends[s]) is not int)
        recipes = []
        for s in looping:
            miss = self._near_miss(s)
            for ch in self._loop_chars(s):
                recipes.append((witness[s], ch, ""))
                if miss is not None:
                    recipes.append((witness[s], ch, miss))
        # Repeated partials: to the states one char short of a match, to looping states, and one
        # char in (the deepest and the shallowest partials; the states between repeat them).
        near_end = {
            s for s in witness if any(dfa.ends[t] is not None for t in dfa.rows[s].values() if t)
        }
        for s in sorted(set(dfa.starts) - {0} | set(looping)):
            for t, unit in sorted(self._paths_from(s).items()):
                if not unit or type(dfa.ends[t]) is int:
                    continue
                if len(unit) == 1 or t in near_end or t in looping:
                    recipes.append((witness[s], unit, ""))
        return recipes

    def shortest_match(self) -> str:
        paths = self._paths_from(self.dfa.starts[0])
        return min((len(p), p) for s, p in paths.items() if self.dfa.ends[s] is not None)[1]


def build(recipes: list[tuple[str, str, str]], n: int) -> str:
    return "".join(head + unit * max(1, n // len(unit)) + tail for head, unit, tail in recipes)


class Adversary:
    """The adversarial outputs of one generated module (see the module docstring)."""

    def __init__(self, module) -> None:
        parser = module.ResponseParser
        shapes: dict = {}

        def of(delimiter) -> DelimiterShapes:
            if delimiter not in shapes:
                shapes[delimiter] = DelimiterShapes(delimiter)
            return shapes[delimiter]

        self.module = module
        # label -> (the text that opens the region, the shapes watched there)
        self.regions: dict[str, tuple[str, list]] = {}
        for label, region in [("home", parser.home), *parser.regions.items()]:
            if region is parser.home:
                # Some words first, as a model writes them, so that `^` opens stay shut; when an
                # open matches at the start anyway (`<think>|^`), that region is closed first.
                openings = ["hi"] + [
                    of(f.open).shortest_match() + of(f.close).shortest_match() + "hi"
                    for f in parser.fields
                    if f.open is not None and f.close is not None
                ]
                opening = next((o for o in openings if self._in_home_after(o)), "hi")
            else:
                opening = of(region.field.open).shortest_match()
            recipes = [r for watch in region.watch for r in of(watch.delimiter).recipes]
            self.regions[label] = (opening, self._apart(label, opening, recipes))
        anchor = of(parser.start_anchor)
        self._anchor = (anchor.recipes, anchor.shortest_match())

    def _in_home_after(self, opening: str) -> bool:
        parser = self.module.ResponseParser(prefix="")
        parser.feed(opening + "x")
        return parser._at_home()

    def leaves(self, label: str, text: str) -> bool:
        """Whether `text` (fed whole after the region's opening, the input not ended) completes a
        delimiter of the region: an open in the home region, the field's close in its own."""
        opening = self.regions[label][0] if label in self.regions else self._opening
        parser = self.module.ResponseParser(prefix="")
        parser.feed(opening)
        if label == "home" and not parser._at_home():
            return True
        events = parser.feed(text)
        home = self.module.ResponseParser.home.name
        if label == "home":
            return any(
                e["type"] == "region_close" or e["field"] != home
                for e in events
                if e["type"] != "region_chunk"
            )
        return any(e["type"] == "region_close" for e in events)

    def _apart(self, label: str, opening: str, recipes: list) -> list:
        """The recipes, each followed by what keeps it and the next one from completing a
        delimiter together (one shape's tail and the next one's head can spell an open): a
        separator that works, else the next shape is left out."""
        self._opening = opening
        kept: list = []
        for recipe in recipes:
            if self.leaves(label, build([recipe], 8)):
                continue  # the shape itself completes one (a loop char that also ends a match)
            if not kept:
                kept.append(recipe)
                continue
            for separator in ("", "\n", " ", "x", "#", "\n\n#"):
                head, unit, tail = kept[-1]
                joined = [(head, unit, tail + separator), recipe]
                if not self.leaves(label, build(joined, 8)):
                    kept[-1] = joined[0]
                    kept.append(recipe)
                    break
        # A delimiter can also be spelled across three shapes or more: leave out the first shape
        # whose text completes one, found by bisection, until none does.
        for n in (8, 64):
            while self.leaves(label, build(kept, n)):
                low, high = 1, len(kept)  # the first `high` shapes complete one
                while low < high:
                    middle = (low + high) // 2
                    if self.leaves(label, build(kept[:middle], n)):
                        high = middle
                    else:
                        low = middle + 1
                del kept[high - 1]
        return kept

    def text(self, label: str, n: int) -> str:
        opening, recipes = self.regions[label]
        return opening + build(recipes, n)

    def prefix(self, n: int) -> str:
        recipes, anchor = self._anchor
        return build(recipes, n) + anchor + self.text("home", n)
