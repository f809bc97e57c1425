"""``pattern``: the supported ECMA-262 regular-expression subset, translated to Python ``re``.

JSON Schema's ``pattern`` is an ECMA-262 regular expression, matched unanchored (a *search*).
This module accepts the constructs whose meaning is the same in both dialects once translated,
and rejects every other construct at definition time, naming it. The pattern is read as with the
``u`` flag (Ajv's default): it matches code points, so ``.`` matches one astral character.

Supported: literal characters, ``.``, ``^``/``$`` (input start/end: no multiline), groups
``(...)`` and ``(?:...)``, lookahead ``(?=...)``/``(?!...)``, alternation ``|``, quantifiers
``* + ? {n} {n,} {n,m}`` with an optional lazy ``?``, character classes ``[...]``/``[^...]`` with
ranges, the class escapes ``\\d \\D \\w \\W \\s \\S`` (ASCII digits and word characters, the
ECMA-262 white-space set), ``\\b \\B``, the control escapes ``\\t \\n \\v \\f \\r \\0``, ``\\xHH``,
``\\uHHHH``, ``\\u{H...}`` and escaped syntax characters.

Rejected (a :class:`PatternError` naming the construct): backreferences (``\\1``, ``\\k<name>``),
named groups ``(?<name>...)``, lookbehind ``(?<=``/``(?<!``, Unicode property escapes
``\\p{...}``/``\\P{...}``, control letters ``\\cX``, inline flags, identity escapes of
non-syntax characters (an error under ``u``), and malformed patterns.

Exponential backtracking: Python's ``re`` (like JavaScript's engines) backtracks, so a pattern in
which a repeated part can match the same text in more than one way (``^(a+)+$``, ``(a|a)*``,
``(a|aa)+``, ``(\\w+\\s?)+$``) takes time exponential in the input on a string that almost
matches, and a match cannot be interrupted. :func:`backtracking_problem` decides, for a translated
pattern, whether that can happen: the extended vocabulary refuses such a pattern at definition
time, naming it. The test is exact for the automaton ``re`` runs (it reads the pattern as ``re``
parses it), so patterns whose repetitions are unambiguous, such as ``^([a-z0-9]+\\.)+[a-z]{2,}$`` or
``(\\d{1,3}\\.){3}\\d{1,3}``, pass; bounded repetitions (``{2,5}``, ``{3}``) count as
repetitions.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

__all__ = ["PatternError", "backtracking_problem", "translate_pattern"]

_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/-")
_JS_SPACE: Final = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
#: Class escapes, as Python class contents (``inside``) and as a whole atom (``outside``).
_CLASS_ESCAPES: Final[dict[str, tuple[str, str]]] = {
    "d": ("0-9", "[0-9]"),
    "D": ("", "[^0-9]"),
    "w": ("A-Za-z0-9_", "[A-Za-z0-9_]"),
    "W": ("", "[^A-Za-z0-9_]"),
    "s": (_JS_SPACE, f"[{_JS_SPACE}]"),
    "S": ("", f"[^{_JS_SPACE}]"),
}
_CONTROL: Final = {"t": "\\t", "n": "\\n", "v": "\\x0b", "f": "\\x0c", "r": "\\r"}
_QUANTIFIER: Final = re.compile(r"\{(\d+)(,(\d*))?\}")


class PatternError(ValueError):
    """A ``pattern`` outside the supported ECMA-262 subset (the message names the construct)."""


def _escape_char(code: int) -> str:
    return f"\\U{code:08x}"


def _read_escape(pattern: str, index: int, *, in_class: bool) -> tuple[str, int, bool]:
    """Translate the escape at ``pattern[index] == "\\\\"``: (python text, next index, is_class_set)."""
    if index + 1 >= len(pattern):
        raise PatternError("a trailing backslash")
    char = pattern[index + 1]
    after = index + 2
    if char in _CLASS_ESCAPES:
        inside, outside = _CLASS_ESCAPES[char]
        if in_class:
            if not inside:
                raise PatternError(f"the negated class escape \\{char} inside a character class")
            return inside, after, True
        return outside, after, True
    if char in _CONTROL:
        return _CONTROL[char], after, False
    if char in "bB" and not in_class:
        return "\\" + char, after, False
    if char == "b" and in_class:
        return "\\x08", after, False
    if char == "0" and not (after < len(pattern) and pattern[after].isdigit()):
        return "\\x00", after, False
    if char.isdigit():
        raise PatternError(f"the backreference \\{char}")
    if char == "k":
        raise PatternError("the named backreference \\k")
    if char in "pP":
        raise PatternError(f"the Unicode property escape \\{char}")
    if char == "c":
        raise PatternError("the control-letter escape \\c")
    if char == "x":
        digits = pattern[after : after + 2]
        if len(digits) != 2 or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise PatternError("a malformed \\x escape")
        return _escape_char(int(digits, 16)), after + 2, False
    if char == "u":
        if pattern.startswith("{", after):
            end = pattern.find("}", after)
            digits = pattern[after + 1 : end] if end > 0 else ""
            if not digits or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise PatternError("a malformed \\u{...} escape")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise PatternError("a \\u{...} escape beyond U+10FFFF")
            return _escape_char(code), end + 1, False
        digits = pattern[after : after + 4]
        if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise PatternError("a malformed \\u escape")
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDBFF and pattern.startswith("\\u", after + 4):
            low_digits = pattern[after + 6 : after + 10]
            if len(low_digits) == 4 and all(d in "0123456789abcdefABCDEF" for d in low_digits):
                low = int(low_digits, 16)
                if 0xDC00 <= low <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    return _escape_char(code), after + 10, False
        return _escape_char(code), after + 4, False
    if char in _SYNTAX:
        return re.escape(char), after, False
    raise PatternError(f"the identity escape \\{char} (not allowed with the u flag)")


def _read_class(pattern: str, index: int) -> tuple[str, int]:
    """Translate the class starting at ``pattern[index] == "["``."""
    out = ["["]
    index += 1
    if index < len(pattern) and pattern[index] == "^":
        out.append("^")
        index += 1
    while True:
        if index >= len(pattern):
            raise PatternError("an unterminated character class")
        char = pattern[index]
        if char == "]":
            break
        if char == "\\":
            text, index, _ = _read_escape(pattern, index, in_class=True)
            out.append(text)
        elif char == "[":
            out.append("\\[")  # a literal in ECMA-262 classes; Python may warn (nested sets)
            index += 1
        elif char in "&~|" and pattern.startswith(char * 2, index):
            out.append(re.escape(char))  # Python reserves doubled set operators
            index += 1
        else:
            out.append(char)
            index += 1
    out.append("]")
    text = "".join(out)
    if text in ("[]", "[^]"):
        # ECMA-262: [] matches nothing, [^] any character.
        text = "(?!)" if text == "[]" else "[\\s\\S]"
    return text, index + 1


def translate_pattern(pattern: str) -> str:
    """Translate an ECMA-262 ``pattern`` (supported subset) into Python ``re`` syntax.

    Args:
        pattern: The ECMA-262 source text.

    Returns:
        Python regex source with the same meaning under ``re.search``.

    Raises:
        PatternError: A rejected or malformed construct, named in the message.
    """
    out: list[str] = []
    index = 0
    depth = 0
    can_quantify = False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            text, index, _ = _read_escape(pattern, index, in_class=False)
            out.append(text)
            can_quantify = text not in ("\\b", "\\B")
            continue
        if char == "[":
            text, index = _read_class(pattern, index)
            out.append(text)
            can_quantify = True
            continue
        if char == "(":
            rest = pattern[index + 1 : index + 4]
            if rest.startswith("?:"):
                out.append("(?:")
                index += 3
            elif rest.startswith(("?=", "?!")):
                out.append(pattern[index : index + 3])
                index += 3
            elif rest.startswith(("?<=", "?<!")):
                raise PatternError("lookbehind (?<= / (?<!")
            elif rest.startswith("?<"):
                raise PatternError("the named group (?<name>...)")
            elif rest.startswith("?"):
                raise PatternError("the group modifier (?" + rest[1:2] + "")
            else:
                out.append("(")
                index += 1
            depth += 1
            can_quantify = False
            continue
        if char == ")":
            if depth == 0:
                raise PatternError("an unmatched )")
            depth -= 1
            out.append(")")
            index += 1
            can_quantify = True
            continue
        if char in "*+?":
            if not can_quantify:
                raise PatternError(f"the quantifier {char} with nothing to repeat")
            out.append(char)
            index += 1
            if index < len(pattern) and pattern[index] == "?":
                out.append("?")
                index += 1
            can_quantify = False
            continue
        if char == "{":
            match = _QUANTIFIER.match(pattern, index)
            if match is None:
                raise PatternError("a lone { (write \\{ for a literal brace)")
            if not can_quantify:
                raise PatternError(f"the quantifier {match.group(0)} with nothing to repeat")
            low = int(match.group(1))
            high = match.group(3)
            if high and int(high) < low:
                raise PatternError(f"the quantifier {match.group(0)} out of order")
            out.append(match.group(0))
            index = match.end()
            if index < len(pattern) and pattern[index] == "?":
                out.append("?")
                index += 1
            can_quantify = False
            continue
        if char == "}":
            raise PatternError("a lone } (write \\} for a literal brace)")
        if char == "]":
            raise PatternError("a lone ] (write \\] for a literal bracket)")
        if char == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
            can_quantify = True
        elif char == "^":
            out.append("(?<![\\s\\S])")
            can_quantify = False
        elif char == "$":
            out.append("(?![\\s\\S])")
            can_quantify = False
        elif char == "|":
            out.append("|")
            can_quantify = False
        else:
            out.append(re.escape(char))
            can_quantify = True
        index += 1
    if depth:
        raise PatternError("an unterminated group")
    source = "".join(out)
    try:
        re.compile(source)
    except (re.error, OverflowError) as error:  # pragma: no cover - translation is closed
        raise PatternError(f"a pattern Python cannot compile ({error})") from error
    return source


# ---------------------------------------------------------------------------------------------
# Exponential backtracking
# ---------------------------------------------------------------------------------------------
#
# A backtracking matcher explores every way the pattern can match a prefix of the input. It takes
# exponential time exactly when the pattern's automaton is *exponentially ambiguous*: some state
# can reach itself by two different paths reading the same text (then ``n`` repetitions of that
# text give ``2**n`` paths, all tried before a failing suffix is reported). The test builds the
# position (Glushkov) automaton of the parsed pattern, keeping *how many* ways each transition
# can be taken (``(a+)+`` has two ways from ``a`` back to ``a``, where a set-based construction
# sees one), and looks for that cycle in the product of the automaton with itself.

#: ``re``'s own parser and opcodes: the test reads the tree ``re`` compiles (untyped, private to
#: the standard library, stable since Python 3.11 renamed ``sre_parse``).
_sre_parse: Any = importlib.import_module("re._parser")
_sre: Any = importlib.import_module("re._constants")

_UNICODE_MAX: Final = 0x10FFFF
#: Counts saturate here: "more than one way" is all the test needs.
_MANY: Final = 2
#: Product edges explored per loop before the pattern is refused as too complex to check.
_PRODUCT_BUDGET: Final = 200_000

_Ranges = tuple[tuple[int, int], ...]
_Counts = dict[int, int]


def _add(into: _Counts, counts: _Counts, factor: int = 1) -> None:
    if factor:
        for position, count in counts.items():
            into[position] = min(_MANY, into.get(position, 0) + count * factor)


def _complement(ranges: _Ranges) -> _Ranges:
    out: list[tuple[int, int]] = []
    low = 0
    for start, end in ranges:
        if start > low:
            out.append((low, start - 1))
        low = max(low, end + 1)
    if low <= _UNICODE_MAX:
        out.append((low, _UNICODE_MAX))
    return tuple(out)


def _normalized(ranges: list[tuple[int, int]]) -> _Ranges:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _charset(op: Any, argument: Any) -> _Ranges:
    """The code points one parsed atom matches (a category counts as every code point: the
    translation only uses ``[\\s\\S]``, and over-approximating can only refuse more)."""
    if op is _sre.LITERAL:
        return ((argument, argument),)
    if op is _sre.NOT_LITERAL:
        return _complement(((argument, argument),))
    if op is _sre.ANY:
        return _complement(((10, 10),))
    ranges: list[tuple[int, int]] = []
    negate = False
    for item_op, item in argument:
        if item_op is _sre.NEGATE:
            negate = True
        elif item_op is _sre.LITERAL:
            ranges.append((item, item))
        elif item_op is _sre.RANGE:
            ranges.append(item)
        else:  # CATEGORY
            ranges.append((0, _UNICODE_MAX))
    normalized = _normalized(ranges)
    return _complement(normalized) if negate else normalized


def _overlap(left: _Ranges, right: _Ranges) -> bool:
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i][1] < right[j][0]:
            i += 1
        elif right[j][1] < left[i][0]:
            j += 1
        else:
            return True
    return False


class _Glushkov:
    """The position automaton of a parsed pattern, with transition multiplicities."""

    def __init__(self) -> None:
        self.charsets: list[_Ranges] = []
        #: ``follow[p][q]``: in how many ways position ``q`` can be read right after ``p``.
        self.follow: list[_Counts] = []
        #: Lookahead bodies, checked as patterns of their own.
        self.lookaheads: list[Any] = []

    def build(self, items: Any) -> tuple[int, _Counts, _Counts]:
        """``(nullable, first, last)`` of a sequence: the number of ways it matches the empty
        string, and of ways it starts / ends with each position (all saturated)."""
        nullable = 1
        first: _Counts = {}
        last: _Counts = {}
        for op, argument in items:
            n2, f2, l2 = self.item(op, argument)
            for p, count in last.items():
                _add(self.follow[p], f2, count)
            new_first = dict(first)
            _add(new_first, f2, nullable)
            new_last = dict(l2)
            _add(new_last, last, n2)
            nullable, first, last = min(_MANY, nullable * n2), new_first, new_last
        return nullable, first, last

    def item(self, op: Any, argument: Any) -> tuple[int, _Counts, _Counts]:
        if op in (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN):
            position = len(self.charsets)
            self.charsets.append(_charset(op, argument))
            self.follow.append({})
            return 0, {position: 1}, {position: 1}
        if op is _sre.SUBPATTERN:
            return self.build(argument[-1])
        if op is _sre.BRANCH:
            nullable = 0
            first: _Counts = {}
            last: _Counts = {}
            for branch in argument[1]:
                n2, f2, l2 = self.build(branch)
                nullable = min(_MANY, nullable + n2)
                _add(first, f2)
                _add(last, l2)
            return nullable, first, last
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            low, high, body = argument
            if high == 0:
                return 1, {}, {}
            nullable, first, last = self.build(body)
            if high != 1:
                # Any bounded repetition counts as unbounded: ``(a|aa){1,40}`` backtracks as
                # badly as ``(a|aa)+`` on inputs of its length.
                for p, count in last.items():
                    _add(self.follow[p], first, count)
            if low == 0:
                nullable = min(_MANY, nullable + 1)
            return nullable, first, last
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            self.lookaheads.append(argument[1])
            return 1, {}, {}
        return 1, {}, {}  # AT (anchors, word boundaries): read nothing


def _components(follow: list[_Counts]) -> list[int]:
    """The strongly connected component of every position (iterative Tarjan)."""
    size = len(follow)
    index = [-1] * size
    low = [0] * size
    component = [-1] * size
    on_stack = [False] * size
    stack: list[int] = []
    counter = 0
    found = 0
    for root in range(size):
        if index[root] != -1:
            continue
        work: list[tuple[int, Any]] = [(root, iter(follow[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if index[succ] == -1:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack[succ] = True
                    work.append((succ, iter(follow[succ])))
                    advanced = True
                    break
                if on_stack[succ]:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component[member] = found
                    if member == node:
                        break
                found += 1
    return component


def _ambiguous_loop(automaton: _Glushkov) -> bool | None:
    """Whether some position can return to itself in two ways reading the same text (``None``:
    a loop too large to check within the budget)."""
    follow, charsets = automaton.follow, automaton.charsets
    component = _components(follow)
    members: dict[int, list[int]] = {}
    for position, group in enumerate(component):
        members.setdefault(group, []).append(position)
    for group, positions in members.items():
        inside = [
            {q: count for q, count in follow[p].items() if component[q] == group}
            for p in range(len(follow))
        ]
        # A parallel transition inside the loop: two ways from ``p`` to ``q`` on one character.
        if any(count > 1 for p in positions for count in inside[p].values()):
            return True
        if len(positions) == 1:
            continue
        # Pairs of different positions read after the same text, entered from a position read
        # after itself (the diagonal). Reaching the diagonal again closes two distinct paths
        # with the same text between two positions of one loop: exponential ambiguity.
        budget = _PRODUCT_BUDGET
        seen: set[tuple[int, int]] = set()
        pending: list[tuple[int, int]] = []
        for start in positions:
            successors = list(inside[start])
            for i, p2 in enumerate(successors):
                for q2 in successors[i + 1 :]:
                    budget -= 1
                    pair = (p2, q2) if p2 < q2 else (q2, p2)
                    if pair not in seen and _overlap(charsets[p2], charsets[q2]):
                        seen.add(pair)
                        pending.append(pair)
        while pending:
            p, q = pending.pop()
            for p2 in inside[p]:
                for q2 in inside[q]:
                    budget -= 1
                    if budget < 0:
                        return None
                    if p2 == q2:
                        return True
                    pair = (p2, q2) if p2 < q2 else (q2, p2)
                    if pair not in seen and _overlap(charsets[p2], charsets[q2]):
                        seen.add(pair)
                        pending.append(pair)
    return False


def backtracking_problem(source: str) -> str | None:
    """Why the Python pattern ``source`` can backtrack exponentially, or ``None`` when it cannot.

    Args:
        source: A pattern as :func:`translate_pattern` returns it.
    """
    pending: list[Any] = [_sre_parse.parse(source)]
    while pending:
        automaton = _Glushkov()
        automaton.build(pending.pop())
        verdict = _ambiguous_loop(automaton)
        if verdict is None:
            return "a repetition too large to check for exponential backtracking"
        if verdict:
            return (
                "a repetition can match the same text in more than one way (nested quantifiers "
                "such as (a+)+, or overlapping alternatives such as (a|aa)+), which backtracks "
                "exponentially"
            )
        pending.extend(automaton.lookaheads)
    return None
