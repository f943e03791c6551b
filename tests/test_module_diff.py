"""A one-token template edit changes only what it edits in the generated module.

A reviewer diffs generated modules in a PR; the diff of an edit must be the edit. For each edit
below, applied to a built-in template, the line diff (difflib) of the two generated modules may
touch only:

- the definitions of what was edited: the top-level statements named after the edited field (its
  delimiters, value function, `Field`, the fast path function of its region), found by parsing
  both modules with `ast`;
- `TEMPLATE`, the header's template hash and the module docstring (the region diagram);
- in the `ResponseParser` class, the lines that name the edited field (its watches, its region);
- the runtime import, by the names of delimiter forms the edit starts or stops using.

The expected owners are written from the edit (which field it touches), not read off the output.
"""

from __future__ import annotations

import ast
import copy
import difflib
import io
import re
import tokenize

import pytest

from chatparse import catalogue
from chatparse.compiler import compile_template
from chatparse.compiler.codegen.codemodel import py_identifiers

FORMS = {
    "Literal",
    "Literals",
    "LeadRunThenLiteral",
    "LeadRunThenLiterals",
    "LiteralThenRun",
    "Dfa",
    "RegexFallback",
    "Row",
    "CharSet",
}


def _set(path):
    def edit(template, value):
        node = template
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def add_alternative(field, key, alternative):
    def apply(template):
        node = template["fields"][field]
        if isinstance(node[key], list):
            node[key] = [*node[key], alternative]
        elif key.endswith("_pattern"):
            pattern = node[key]
            if pattern.endswith(")") and "(?:" in pattern:  # into the group of alternatives
                node[key] = pattern[:-1] + "|" + alternative + ")"
            else:
                node[key] = pattern + "|" + alternative
        return template

    return apply


def replace_in(field, key, old, new):
    def apply(template):
        node = template["fields"][field]
        assert old in node[key]
        node[key] = node[key].replace(old, new)
        return template

    return apply


def rename_field(old, new):
    def apply(template):
        template["fields"] = {
            new if name == old else name: f for name, f in template["fields"].items()
        }
        return template

    return apply


def add_field(name, spec):
    def apply(template):
        template["fields"][name] = spec
        return template

    return apply


# (family, what the edit does, the edit, the fields it touches)
EDITS = [
    (
        "smollm3",
        "add an alternative to a close",
        add_alternative("content", "close_pattern", r"<\|endoftext\|>"),
        {"content"},
    ),
    (
        "smollm3",
        "change a literal open",
        replace_in("reasoning_content", "open", "<think>", "<thinking>"),
        {"reasoning_content"},
    ),
    (
        "smollm3",
        "change the first char of a literal open",
        replace_in("reasoning_content", "open", "<think>", "[think]"),
        {"reasoning_content"},
    ),
    (
        "smollm3",
        "rename a field",
        rename_field("reasoning_content", "reasoning"),
        {"reasoning_content", "reasoning"},
    ),
    ("smollm3", "add a field", add_field("code", {"open": "<code>", "close": "</code>"}), {"code"}),
    (
        "qwen3",
        "add an alternative to a close",
        add_alternative("content", "close_pattern", "</s>"),
        {"content"},
    ),
    (
        "qwen3",
        "change a literal open",
        replace_in("reasoning_content", "open", "<think>", "<thinking>"),
        {"reasoning_content"},
    ),
    (
        "qwen3",
        "rename a field",
        rename_field("reasoning_content", "reasoning"),
        {"reasoning_content", "reasoning"},
    ),
    ("qwen3", "add a field", add_field("code", {"open": "<code>", "close": "</code>"}), {"code"}),
    (
        "gpt_oss",
        "add an alternative to a close",
        add_alternative("content", "close", "<|eot|>"),
        {"content"},
    ),
    (
        "gpt_oss",
        "add an alternative to an open pattern",
        replace_in(
            "tool_calls",
            "open_pattern",
            "(?:commentary|analysis)\\s+",
            "(?:commentary|analysis|final)\\s+",
        ),
        {"tool_calls"},
    ),
    (
        "gpt_oss",
        "change a literal open",
        replace_in("reasoning_content", "open", "analysis", "thinking"),
        {"reasoning_content"},
    ),
    (
        "gpt_oss",
        "rename a field",
        rename_field("reasoning_content", "reasoning"),
        {"reasoning_content", "reasoning"},
    ),
    ("gpt_oss", "add a field", add_field("code", {"open": "<code>", "close": "</code>"}), {"code"}),
    (
        "hermes",
        "add an alternative to a close",
        add_alternative("content", "close_pattern", "</s>"),
        {"content"},
    ),
    ("hermes", "rename a field", rename_field("tool_calls", "calls"), {"tool_calls", "calls"}),
    ("hermes", "add a field", add_field("code", {"open": "<code>", "close": "</code>"}), {"code"}),
    (
        "phi4_mini",
        "add an alternative to a close",
        add_alternative("tool_calls", "close_pattern", "</s>"),
        {"tool_calls"},
    ),
    (
        "phi4_mini",
        "change the literal of a fallback open",
        replace_in("tool_calls", "open_pattern", "functools", "tools"),
        {"tool_calls"},
    ),
    (
        "phi4_mini",
        "add a field",
        add_field("code", {"open": "<code>", "close": "</code>"}),
        {"code"},
    ),
]


def compiled(family, template):
    label = f"templates/{family}.json"
    return compile_template(
        template,
        source_path=label,
        rebuild=catalogue.rebuild_command(label, f"generated/{family}.py"),
    )


def line_owners(source: str, fields: set[str], stems: set[str]) -> list[str | None]:
    """For each line (0-based), why it may change: 'edited', 'template', 'docstring', 'hash',
    'import' (with the names it imports), or None."""
    lines = source.splitlines()
    owners: list[str | None] = [None] * len(lines)
    for index, line in enumerate(lines):
        if line.startswith("# template: sha256:"):
            owners[index] = "hash"
    tree = ast.parse(source)

    def mark(node, owner):
        for number in range(node.lineno - 1, node.end_lineno):
            owners[number] = owner

    named = re.compile(
        "|".join(
            # (X_OPEN, and the delimiters it is built from: X_OPEN_BEFORE_LOOKAHEAD, ...)
            rf"\b{re.escape(stem)}_[A-Z][A-Z0-9_]*\b|\b{re.escape(stem.lower())}_(?:value|feed|after_run)\b"
            for stem in stems
        )
    )
    quoted = {repr(name) for name in fields} | {f'"{name}"' for name in fields}
    for node in tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            mark(node, "docstring")
        elif isinstance(node, ast.ImportFrom) and node.module == "chatparse.runtime":
            mark(node, "import")
        elif isinstance(node, ast.Assign | ast.FunctionDef):
            targets = (
                [node.name]
                if isinstance(node, ast.FunctionDef)
                else [t.id for t in node.targets if isinstance(t, ast.Name)]
            )
            if any(t == "TEMPLATE" or t.startswith("TEMPLATE_") for t in targets):
                mark(node, "template")
            elif any(named.fullmatch(t) for t in targets):
                mark(node, "edited")
        elif isinstance(node, ast.ClassDef) and node.name == "ResponseParser":
            # The class docstring describes each region's fast path: its lines that name an
            # edited field (its region's test, the delimiters it commits whole) are the edit's.
            doc = node.body[0]
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant):
                word = re.compile("|".join(rf"(?<![\w.]){re.escape(f)}(?![\w])" for f in fields))
                for number in range(doc.lineno - 1, doc.end_lineno):
                    if word.search(lines[number]):
                        owners[number] = "edited"

            # The items (tuple elements, dict entries) of the class's data that name the field.
            def names_field(item) -> bool:
                text = ast.get_source_segment(source, item) or ""
                return bool(named.search(text)) or any(q in text for q in quoted)

            # In its methods (the generated `feed`), the statements that name the edited field,
            # as black lays them out, the test of an `if` that names it, and a docstring's lines.
            compound = (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.FunctionDef)
            for inner in ast.walk(node):
                if inner is doc or not isinstance(inner, ast.stmt | ast.expr):
                    continue
                if isinstance(inner, ast.If):
                    if names_field(inner.test):
                        mark(inner.test, "edited")
                elif isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Constant):
                    for number in range(inner.lineno - 1, inner.end_lineno):
                        if named.search(lines[number]) or any(q in lines[number] for q in quoted):
                            owners[number] = "edited"
                elif isinstance(inner, ast.stmt) and not isinstance(inner, compound):
                    if names_field(inner):
                        mark(inner, "edited")
            for inner in ast.walk(node):
                items = []
                if isinstance(inner, ast.Tuple | ast.List):
                    items = [(item, item) for item in inner.elts]
                elif isinstance(inner, ast.Dict):
                    items = [
                        (key, value)
                        for key, value in zip(inner.keys, inner.values)
                        if key is not None
                    ]
                for first, last in items:
                    if names_field(first) or names_field(last):
                        for number in range(first.lineno - 1, last.end_lineno):
                            owners[number] = "edited"
    # A line whose comment names an edited definition is the edit's: a fast path's test of a
    # char, or its line in a region's `X_STOPS`, says which delimiters start with that char.
    # A comment on a line of its own is about the statement below it, or inside an expression
    # (the generated `feed`'s test of a plain chunk) about the line below it.
    statements = {node.lineno - 1: node for node in ast.walk(tree) if isinstance(node, ast.stmt)}
    for number, (column, comment) in comments(source).items():
        if named.search(comment):
            owners[number] = "edited"
            if not lines[number][:column].strip():
                if number + 1 in statements:
                    mark(statements[number + 1], "edited")
                elif number + 1 < len(lines):
                    owners[number + 1] = "edited"
    for index, line in enumerate(lines):
        if owners[index] is None and not line.strip():
            owners[index] = "blank"  # the separator between definitions added or removed
    return owners


def imported_runtime_names(source: str) -> set[str]:
    tree = ast.parse(source)
    return {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "chatparse.runtime"
        for alias in node.names
    }


def comments(source: str) -> dict[int, tuple[int, str]]:
    """Line (0-based) -> (column, text) of its comment."""
    return {
        token.start[0] - 1: (token.start[1], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }


def share_listed_owners(
    before: str, after: str, owners_old: list, owners_new: list, fields: set[str], stems: set[str]
) -> None:
    """A changed line that differs from its counterpart only by listing what was edited is the
    edit's on both sides: the line of a char several delimiters start with (its test's comment,
    its line in `X_STOPS` and in the docstring) gains or loses the edited delimiter's name."""
    old, new = before.splitlines(), after.splitlines()
    names = "|".join(
        [rf"\b{re.escape(stem)}_[A-Z]+\b" for stem in stems]
        + [rf"(?:(?:open|close) )?(?<![\w.]){re.escape(field)}(?!\w)" for field in fields]
    )
    listed = re.compile(rf"(?:{names})(?:, )?")

    def unlisted(line: str) -> str:
        return listed.sub("", line).replace(", )", ")").removesuffix(", ")

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "replace":
            continue
        for i in range(i1, i2):
            for j in range(j1, j2):
                if "edited" in (owners_old[i], owners_new[j]) and unlisted(old[i]) == unlisted(
                    new[j]
                ):
                    owners_old[i] = owners_new[j] = "edited"


def changed_lines(before: str, after: str):
    """(old line indexes, new line indexes) that the diff touches."""
    old, new = before.splitlines(), after.splitlines()
    touched_old, touched_new = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            touched_old.extend(range(i1, i2))
            touched_new.extend(range(j1, j2))
    return touched_old, touched_new


def presentations(before: str, after: str):
    """Every equally short presentation of the diff: a block inserted (or deleted) next to lines
    equal to its own edge lines may be shown shifted over them, as `git diff` slides hunks to
    the definition boundaries. (old, new) touched line indexes for each."""
    old, new = before.splitlines(), after.splitlines()
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    choices = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "insert":
            lines, lo, hi, side = new, j1, j2, "new"
        elif tag == "delete":
            lines, lo, hi, side = old, i1, i2, "old"
        else:
            choices.append(
                [(list(range(i1, i2)), list(range(j1, j2)))] if tag != "equal" else [([], [])]
            )
            continue
        shifts = [0]
        k = 0
        while hi + k < len(lines) and lines[lo + k] == lines[hi + k]:
            k += 1
            shifts.append(k)
        k = 0
        while lo - k - 1 >= 0 and lines[lo - k - 1] == lines[hi - k - 1]:
            k += 1
            shifts.append(-k)
        block = [list(range(lo + s, hi + s)) for s in shifts]
        choices.append([([], b) if side == "new" else (b, []) for b in block])
    return choices


@pytest.mark.parametrize(
    ("family", "what", "edit", "fields"),
    [pytest.param(*edit, id=f"{edit[0]}: {edit[1]}") for edit in EDITS],
)
def test_one_token_edit_touches_only_what_it_edits(family, what, edit, fields):
    template = catalogue.load_template(family)
    before = compiled(family, template)
    after = compiled(family, edit(copy.deepcopy(template)))
    assert before != after
    stems = set(py_identifiers(list(fields)).values())
    touched_old, touched_new = changed_lines(before, after)
    assert touched_old or touched_new
    owners_old, owners_new = line_owners(before, fields, stems), line_owners(after, fields, stems)
    share_listed_owners(before, after, owners_old, owners_new, fields, stems)
    lines_old, lines_new = before.splitlines(), after.splitlines()
    strays = []
    for choices in presentations(before, after):
        # each hunk as the reviewer would best see it: the presentation with the fewest strays
        found = min(
            (
                [lines_old[i] for i in old if owners_old[i] is None]
                + [lines_new[j] for j in new if owners_new[j] is None]
                for old, new in choices
            ),
            key=len,
        )
        strays += found
    assert not strays, f"{family}, {what}: lines outside the edited definitions changed: {strays}"
    # The import may change only by the delimiter forms the edit starts or stops using.
    assert imported_runtime_names(before) ^ imported_runtime_names(after) <= FORMS


def test_the_owner_map_catches_a_stray_change():
    """The check above can fail: renaming a field the edit does not touch is a stray change."""
    template = catalogue.load_template("smollm3")
    before = compiled("smollm3", template)
    after = compiled("smollm3", rename_field("tool_calls", "calls")(copy.deepcopy(template)))
    fields = {"reasoning_content"}
    stems = set(py_identifiers(list(fields)).values())
    touched_old, touched_new = changed_lines(before, after)
    owners = line_owners(after, fields, stems)
    assert any(owners[index] is None for index in touched_new)
    # and however its hunks are slid, some hunk keeps a stray line
    owners_old = line_owners(before, fields, stems)
    assert any(
        all(
            any(owners_old[i] is None for i in old) or any(owners[j] is None for j in new)
            for old, new in choices
        )
        for choices in presentations(before, after)
    )


def test_a_line_is_shared_only_when_it_differs_by_the_edited_names():
    before = "x = 1\nSTOPS = [\n    '<',  # A_OPEN, B_CLOSE\n]\ny = 2  # B_CLOSE\n"
    after = "x = 1\nSTOPS = [\n    '<',  # C_OPEN, A_OPEN, B_CLOSE\n]\ny = 3  # C_OPEN, B_CLOSE\n"
    owners_old, owners_new = line_owners(before, {"c"}, {"C"}), line_owners(after, {"c"}, {"C"})
    assert owners_old[2] is None and owners_new[2] == "edited"
    share_listed_owners(before, after, owners_old, owners_new, {"c"}, {"C"})
    assert owners_old[2] == "edited"  # '<' gained C_OPEN and nothing else
    assert owners_old[4] is None  # y changed its value too: a stray change, not a listing
