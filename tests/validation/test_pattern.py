"""The ECMA-262 ``pattern`` subset: what it accepts means what JavaScript (``u`` flag) means;
what it rejects is named at definition time."""

from __future__ import annotations

import re

import pytest

from trio_harness.lowlevel import PatternError, translate_pattern


def search(pattern: str, text: str) -> bool:
    return re.search(translate_pattern(pattern), text) is not None


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^a", "ba", False),  # unanchored search, but ^ is the input start
        ("a$", "a\n", False),  # $ is the input end (Python's $ would match before the newline)
        ("^a.c$", "a\nc", False),  # . excludes line terminators
        ("^a.c$", "a💩c", True),  # u flag: . is one code point
        ("\\d", "٣", False),  # \d is ASCII digits only
        ("\\w", "é", False),
        ("\\s", "\u00a0", True),  # the ECMA-262 white-space set
        ("^[^]$", "\n", True),  # [^] is any character
        ("[]", "a", False),  # [] matches nothing
        ("^\\u0041\\x42\\u{1F4A9}$", "AB💩", True),
        ("^\\ud83d\\udca9$", "💩", True),  # a surrogate pair is one code point
        ("^(?:ab)+?$", "abab", True),
        ("a(?=b)", "ab", True),
        ("a(?!b)", "ab", False),
        ("^[a-c\\d_-]{2,3}$", "a1-", True),
        ("[[]", "[", True),
        ("\\bword\\b", "a word", True),
        ("^\\/\\.$", "/.", True),
    ],
)
def test_supported_constructs_mean_what_javascript_means(
    pattern: str, text: str, matches: bool
) -> None:
    assert search(pattern, text) is matches


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("(a)\\1", "the backreference \\1"),
        ("(?<x>a)\\k<x>", "the named group (?<name>...)"),
        ("(?<=a)b", "lookbehind"),
        ("\\p{L}", "the Unicode property escape \\p"),
        ("\\cA", "the control-letter escape \\c"),
        ("\\a", "the identity escape \\a"),
        ("(?i)a", "the group modifier (?i"),
        ("a{2,1}", "the quantifier {2,1} out of order"),
        ("*a", "the quantifier * with nothing to repeat"),
        ("(a", "an unterminated group"),
        ("a)", "an unmatched )"),
        ("[a", "an unterminated character class"),
        ("a{", "a lone {"),
        ("\\", "a trailing backslash"),
    ],
)
def test_rejected_constructs_are_named(pattern: str, named: str) -> None:
    with pytest.raises(PatternError, match=re.escape(named)):
        translate_pattern(pattern)
