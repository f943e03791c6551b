"""Every size limit of the compiler, in one place (README "Limits").

Templates come from model hubs and are untrusted, and the dict API compiles one on first use, so
the compiler's work must grow linearly with the template's size. The work per field is linear in
its delimiters' length up to `MAX_DELIMITER_LENGTH`, past which the template is refused; the work
that compares delimiters with one another is bounded by a budget. Each limit says what happens
past it: a refusal (ValueError naming the field, the key and the limit), a `regex` fallback for
one delimiter, or a smaller optimisation table (the module stays correct, only slower on that
path).
"""

from __future__ import annotations

# -- refusals (ValueError) ------------------------------------------------------------------------

# The longest delimiter a template may give, in chars: a `*_pattern`'s source, or the sum of the
# lengths of an `open`/`close`/`start_anchor` literal list. The reference accepts any length;
# chatparse parses, determinizes and checks every delimiter, 0.1 to 0.2 ms a char, so a 1 MB literal
# would take minutes. Delimiters are special tokens and short markup: the longest built-in is 255
# chars.
MAX_DELIMITER_LENGTH = 10_000

# The most DFA states a template's delimiters may build in all (counted as the determinizer builds
# them, so a delimiter that passes a DFA limit below and falls back to `regex` counts the states
# it built first, as does a look-ahead fallback's relaxed DFA). Every later stage works per state,
# about 0.2 to 0.4 ms each, and a pattern of 20 chars can need a thousand
# (`<(?:a|b)*a(?:a|b){9}>`). 1,000 fields of issue 19's shape build 13,900; a built-in at most 259.
MAX_TEMPLATE_DFA_STATES = 30_000

# -- a `regex` fallback for that one delimiter -----------------------------------------------------

# A pattern whose Thompson NFA or minimal DFA would have more states than these runs on `regex`;
# one that is only literal text (a literal list, or a pattern of literal alternatives) keeps its
# literal form, whose trie the runtime builds in linear time (codemodel
# `_oversized_literals_model`), and is planned as a fallback is.
MAX_NFA_STATES = 20_000
MAX_DFA_STATES = 10_000
# ... and one whose states (NFA or DFA) times its char classes exceed this: building the DFA takes
# a step per such cell, and a literal of n distinct chars has about n states and n classes.
MAX_TABLE_CELLS = 100_000

# -- smaller optimisation tables --------------------------------------------------------------------

# A delimiter's whole-chunk literals (compiler/planning/fast_path.py `whole`): looked for this deep and this
# many per delimiter, in at most this many search steps (a DFA with branching single-char loops has
# exponentially many paths of length 64).
WHOLE_MAX_LENGTH = 64
WHOLE_MAX_COUNT = 16
WHOLE_MAX_STEPS = 4096
# A class on a literal path may branch it into this many chars (`[mt]` in `<\|eo[mt]_id\|>`).
PATH_CLASS_MAX = 4
# Checking that a whole-chunk literal beats every other delimiter of its region steps the others
# over it; per region, at most this many steps in all. Past it the later delimiters of the region
# get no whole-chunk literals (their chunks take the general path, which commits them all the
# same). Distinct delimiters die within a few chars of each other's literals, so a region of
# 1,000 fields (issue 19's shape) uses about 67,000.
WHOLE_RIVAL_STEPS = 400_000

# -- the output's form ----------------------------------------------------------------------------

# black formats about 90 KB of source a second. A module whose rendered source is longer than this
# (about 30 fields of one short regex delimiter each) is emitted as jinja2 renders it: the same
# code, as deterministic, only not formatted. Every built-in renders to under 40 KB.
FORMAT_MAX_CHARS = 100_000
