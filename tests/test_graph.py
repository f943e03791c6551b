"""`chatparse graph`: the DOT it writes, read back (tests/test_authoring_cli.py's reader), equals
the automaton: every region edge with its delimiter, and every delimiter DFA state by state (shape,
targets, the char classes on each edge), for every built-in and for a hostile template.
"""

from __future__ import annotations

import json

import pytest
from test_authoring_cli import read_dot

from chatparse import catalogue
from chatparse.cli.chatparse_command import main
from chatparse.compiler.automata.region_automaton import build_regions
from chatparse.compiler.frontend.spec import load_spec
from chatparse.compiler.frontend.symbolic_charclass import format_charset


def draw(template: dict | str, tmp_path, capsys):
    if isinstance(template, dict):
        path = tmp_path / "t.json"
        path.write_text(json.dumps(template), encoding="utf-8")
        template = str(path)
    out = tmp_path / "t.dot"
    assert main(["graph", template, "-o", str(out)]) == 0
    capsys.readouterr()
    return read_dot(out.read_text(encoding="utf-8"))


def labels(edges, a: str, b: str) -> list[str]:
    return [at.get("label") for x, y, at in edges if (x, y) == (a, b)]


def check_against_automaton(dot, template: dict) -> None:
    nodes, edges, clusters = dot
    automaton = build_regions(load_spec(template))
    spec = automaton.spec
    home_field = automaton.home.field
    home = f"region {home_field}" if home_field is not None else "(null sink)"
    assert home in clusters["cluster_regions"]
    assert labels(edges, "(prefix)", home) == [automaton.start_anchor.spec.describe()]
    for field in spec.fields:
        if field.open is None:
            continue
        region = f"region {field.name}"
        assert nodes[region]["label"] == field.name
        assert labels(edges, home, region) == [field.open.describe()]
        back = labels(edges, region, home)
        assert back == ([field.close.describe()] if field.close is not None else [])
    if home_field is not None and spec.field(home_field).close is not None:
        assert labels(edges, home, home) == [spec.field(home_field).close.describe()]
    delimiters = {"start_anchor": automaton.start_anchor}
    delimiters |= {f"{f} {role}": d for (f, role), d in automaton.delimiters.items()}
    for title, delimiter in delimiters.items():
        members = set(clusters[f"cluster_{title}"])
        dfa = delimiter.dfa
        if dfa is None and delimiter.lookahead is not None:
            dfa = delimiter.lookahead.dfa  # look-aheads that end it, read as consumed
        if dfa is None:
            assert members == {f"{title} fallback"}
            assert nodes[f"{title} fallback"]["label"].endswith(str(delimiter.fallback_reason))
            continue
        states = {f"{title} s{n}": n for n in range(1, len(dfa.rows))}
        assert members == set(states) | {f"{title} start"}
        assert labels(edges, f"{title} start", f"{title} s{dfa.starts[0]}") == [None]
        for node, state in states.items():
            reports = dfa.ends[state] is not None
            assert nodes[node]["shape"] == ("doublecircle" if reports else "circle"), node
            drawn = {b for a, b, _ in edges if a == node}
            assert drawn == {f"{title} s{t}" for t in dfa.rows[state].values()}, node
            for target in set(dfa.rows[state].values()):
                expected = sorted(
                    format_charset(dfa.classes[symbol - 1])
                    for symbol, t in dfa.rows[state].items()
                    if t == target
                )
                (label,) = labels(edges, node, f"{title} s{target}")
                assert sorted(label.split("\n")) == expected, (node, target)


@pytest.mark.parametrize("family", catalogue.families())
def test_graph_of_every_builtin_reads_back_as_its_automaton(family, tmp_path, capsys):
    check_against_automaton(draw(family, tmp_path, capsys), catalogue.builtin_template(family))


def test_graph_of_a_hostile_template_reads_back_as_its_automaton(tmp_path, capsys):
    name = 'a"b\\c\nd} -> "x'
    template = {
        "start_anchor": '"}\n',
        "fields": {
            "content": {"close_pattern": '\\\\"|\\n| \\|'},
            name: {"open": '<"\\n>', "close_pattern": "(?<=a)\\]"},
            "r": {"open_pattern": "[ |]+<", "close": "</r>", "repeats": True},
        },
    }
    dot = draw(template, tmp_path, capsys)
    assert dot[0][f"region {name}"]["label"] == name
    check_against_automaton(dot, template)
