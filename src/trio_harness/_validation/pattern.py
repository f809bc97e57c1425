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
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["PatternError", "translate_pattern"]

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
