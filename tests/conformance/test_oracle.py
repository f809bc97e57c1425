"""The answering oracle (``python -m trio_harness oracle``): recorded cases in, our answers out.

The oracle must reproduce every recorded upstream answer byte for byte (JSON text after the same
tagging of special numbers), answer malformed input with an ``error`` line instead of crashing,
and work at any depth.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.vector_cases import SUITE, SUITE_ABSENT, VECTORS
from trio_harness.__main__ import main
from trio_harness._conformance.oracle import (
    SKIPPED_UNDEFINED,
    UNDEFINED,
    answer_line,
    answer_lines,
    decode_tags,
    encode_tags,
)
from trio_harness.lowlevel import answer_case, js_json

DEPTH = 100_000


def _cases(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _recorded_text(case: dict[str, Any]) -> str:
    # The recorded expectation through the same decode → encode → render as our answers.
    return js_json(encode_tags(decode_tags(case["expected"])))


def _rounded_like_javascript(text: str) -> str:
    """Re-render JSON text with integers beyond 2**53 rounded to doubles, as JavaScript holds them."""

    def parse_int(digits: str) -> int | float:
        number = int(digits)
        return float(number) if abs(number) > 2**53 else number

    return js_json(json.loads(text, parse_int=parse_int))


@pytest.mark.parametrize(
    "path",
    [
        VECTORS,
        pytest.param(SUITE, marks=pytest.mark.skipif(not SUITE.is_file(), reason=SUITE_ABSENT)),
    ],
    ids=lambda p: p.name,
)
def test_every_recorded_case_is_answered_exactly_as_upstream(path: Path) -> None:
    # upstream #1-#60 (validation layer): the recorded answers of every op, byte for byte.
    cases = _cases(path)
    mismatches = []
    porting = 0
    for case in cases:
        answered = answer_case(case)
        assert list(answered) == list(case), "the case is echoed, expected in place"
        got, want = js_json(answered["expected"]), _recorded_text(case)
        if got == want:
            continue
        if case["op"] == "parseArguments" and _rounded_like_javascript(
            got
        ) == _rounded_like_javascript(want):
            porting += 1  # documented decision: Python keeps integers beyond 2**53 exact
            continue
        mismatches.append((case, got, want))
    for case, got, want in mismatches[:10]:
        print(json.dumps(case)[:300], "\n  got ", got[:300], "\n  want", want[:300])
    assert not mismatches, f"{len(mismatches)} of {len(cases)} cases differ"
    assert porting == 0  # this corpus holds no integer beyond 2**53
    ops = {case["op"] for case in cases}
    if path == VECTORS:
        assert ops == {
            "validate",
            "assert",
            "assertObject",
            "compileParams",
            "compileValue",
            "validateArgs",
            "parseArguments",
        }


def test_integers_beyond_2_53_stay_exact_the_only_allowed_difference() -> None:
    answered = answer_case({"op": "parseArguments", "raw": "[9007199254740993]"})
    assert js_json(answered["expected"]) == '{"value":[9007199254740993]}'
    upstream = '{"value":[9007199254740992]}'
    assert _rounded_like_javascript(js_json(answered["expected"])) == upstream


def test_answer_shapes_per_op() -> None:
    def expected(case: dict[str, Any]) -> str:
        return js_json(answer_case(case)["expected"])

    assert (
        expected({"op": "validate", "schema": {"type": "integer"}, "value": 1.5, "path": "n"})
        == '{"violations":["\\"n\\" must be an integer"]}'
    )
    # ``path`` is optional: upstream's default root label ``value``.
    assert expected({"op": "validate", "schema": {"type": "string"}, "value": 1}) == (
        '{"violations":["\\"value\\" must be a string"]}'
    )
    assert expected({"op": "assert", "schema": {"type": "string"}}) == '{"ok":true}'
    assert expected({"op": "assertObject", "schema": {"type": "string"}}) == (
        '{"throws":{"name":"JsonSchemaError",'
        '"message":"unsupported JSON schema: schema.type must be \\"object\\" '
        '(structured output is object-rooted)","code":"UNSUPPORTED_SCHEMA",'
        '"violations":["schema.type must be \\"object\\" (structured output is object-rooted)"]}}'
    )
    assert expected({"op": "compileValue", "spec": {"type": "string"}}) == (
        '{"schema":{"type":"string"}}'
    )
    assert expected({"op": "compileParams", "spec": {"n": {"type": "integer"}}}) == (
        '{"schema":{"type":"object","properties":{"n":{"type":"integer"}}}}'
    )
    assert expected({"op": "validateArgs", "spec": {"n": {"type": "integer"}}, "args": []}) == (
        '{"violations":["\\"arguments\\" must be an object"]}'
    )
    assert expected({"op": "parseArguments", "raw": ""}) == '{"value":{}}'
    assert expected({"op": "parseArguments", "raw": "{NaN"}) == '{"value":"{NaN"}'


def test_a_non_harness_exception_is_answered_with_name_and_message_only() -> None:
    # parse_arguments(5) raises TypeError: no code, no violations.
    answered = answer_case({"op": "parseArguments", "raw": 5})
    assert answered["expected"] == {
        "throws": {"name": "TypeError", "message": "parse_arguments() expects a str, got int"}
    }


def test_special_numbers_use_the_tags_both_ways() -> None:
    answered = answer_case({"op": "parseArguments", "raw": "[-0, 1e400, -1e400, 0.5]"})
    assert js_json(answered["expected"]) == (
        '{"value":[{"$negzero":true},{"$inf":1},{"$inf":-1},0.5]}'
    )
    nan_case = {"op": "validate", "schema": {"type": "number"}, "value": {"$nan": True}}
    assert js_json(answer_case(nan_case)) == (
        '{"op":"validate","schema":{"type":"number"},"value":{"$nan":true},'
        '"expected":{"violations":["\\"value\\" must be a finite JSON number"]}}'
    )
    decoded = decode_tags([{"$nan": True}, {"$inf": 1}, {"$inf": -1.0}, {"$negzero": True}])
    assert isinstance(decoded, list)
    assert math.isnan(decoded[0])
    assert decoded[1:3] == [math.inf, -math.inf]
    assert math.copysign(1.0, decoded[3]) == -1.0
    assert encode_tags(decoded) == [
        {"$nan": True},
        {"$inf": 1},
        {"$inf": -1},
        {"$negzero": True},
    ]
    assert decode_tags({"$undefined": True}) is UNDEFINED
    assert encode_tags([UNDEFINED]) == [{"$undefined": True}]


def test_only_exact_tags_are_special() -> None:
    plain = [{"$nan": 1}, {"$inf": 2}, {"$inf": True}, {"$negzero": False}, {"$nan": True, "x": 1}]
    assert decode_tags(plain) == plain


def test_undefined_in_an_input_is_skipped_elsewhere_it_is_echoed() -> None:
    skipped = answer_case(
        {"op": "compileValue", "spec": {"type": "string", "description": {"$undefined": True}}}
    )
    assert skipped["expected"] == {"skipped": SKIPPED_UNDEFINED}
    assert skipped["spec"] == {"type": "string", "description": {"$undefined": True}}
    answered = answer_case(
        {"op": "assert", "schema": {"type": "null"}, "note": {"$undefined": True}}
    )
    assert answered == {
        "op": "assert",
        "schema": {"type": "null"},
        "note": {"$undefined": True},
        "expected": {"ok": True},
    }


def test_the_case_is_echoed_in_key_order_with_expected_in_place_or_appended() -> None:
    case = {"expected": None, "op": "assert", "zeta": 1, "schema": {"type": "null"}, "alpha": 2}
    answered = answer_case(case)
    assert list(answered) == ["expected", "op", "zeta", "schema", "alpha"]
    assert answered["expected"] == {"ok": True}
    assert case["expected"] is None  # the input is not mutated
    assert list(answer_case({"schema": {"type": "null"}, "op": "assert"})) == [
        "schema",
        "op",
        "expected",
    ]


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ([1], "a case must be a JSON object, got array"),
        ("x", "a case must be a JSON object, got string"),
        (None, "a case must be a JSON object, got null"),
        ({"schema": {}}, 'case has no "op"'),
        ({"op": "frobnicate"}, 'unknown op "frobnicate"'),
        ({"op": 3}, "unknown op 3"),
        ({"op": "validate"}, 'op "validate" needs "schema", "value"'),
        ({"op": "validateArgs", "spec": {}}, 'op "validateArgs" needs "args"'),
        (
            {"op": "validate", "schema": {}, "value": 1, "path": 2},
            '"path" must be a string, got number',
        ),
    ],
)
def test_a_case_that_cannot_be_answered_is_an_error_line(case: object, error: str) -> None:
    assert answer_case(case) == {"error": error}


def test_every_line_gets_exactly_one_answer() -> None:
    # A port converses line by line: a line without an answer would leave it waiting forever.
    assert answer_line("{not json") == '{"error":"malformed line: not JSON"}'
    assert answer_line("   \n") == '{"error":"malformed line: blank"}'
    lines = [
        b"\xef\xbb\xbf" + b'{"op":"assert","schema":{"type":"null"}}\n',  # byte-order mark
        b"\n",
        b'{"op": "nope"}\r\n',
        b"\xff\xfe\n",
        b" \t\r\n",
        b'{"op":"validate","schema":{"type":"string"},"value":"\xc3\xa9"}\n',
        b"",
    ]
    assert list(answer_lines(lines)) == [
        '{"op":"assert","schema":{"type":"null"},"expected":{"ok":true}}',
        '{"error":"malformed line: blank"}',
        '{"error":"unknown op \\"nope\\""}',
        '{"error":"malformed line: not UTF-8"}',
        '{"error":"malformed line: blank"}',
        '{"op":"validate","schema":{"type":"string"},"value":"é","expected":{"violations":[]}}',
        '{"error":"malformed line: blank"}',
    ]


# Whitespace to Python's ``str.strip`` and ``str.split``, never to JSON (space, tab, LF, CR only).
NON_JSON_WHITESPACE = ["\x0c", "\x0b", "\xa0", "\u2028", "\u2029", "\x85", "\u3000", "\ufeff"]


@pytest.mark.parametrize("space", NON_JSON_WHITESPACE, ids=lambda c: f"U+{ord(c):04X}")
def test_a_line_of_non_json_whitespace_is_answered_not_json(space: str) -> None:
    expected = '{"error":"malformed line: not JSON"}'
    assert answer_line(space + "\n") == expected
    assert answer_line(" " + space + " ") == expected
    assert answer_line(space + '{"op":"assert","schema":{}}') == expected
    lines = ["\n", (space + "\n").encode("utf-8"), space, "{}"]
    assert list(answer_lines(lines)) == [
        '{"error":"malformed line: blank"}',
        expected,
        expected,
        '{"error":"case has no \\"op\\""}',
    ]


def _wrap(text: str, depth: int) -> str:
    return "[" * depth + text + "]" * depth


def _validate_line(depth: int, schema: dict[str, Any], value_text: str) -> str:
    """A ``validate`` case: ``schema`` as the items of ``depth`` nested arrays, ``value_text``
    inside ``depth`` arrays. Returns the line, which is also the answer's text up to ``expected``."""
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return '{"op":"validate","schema":' + js_json(schema) + ',"value":' + _wrap(value_text, depth)


DEPTHS = [0, 1, 2_000]
CLOSED = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_not_json_at_any_depth(literal: str, depth: int) -> None:
    # JSON.parse rejects them everywhere; the tags {"$nan": true} / {"$inf": ±1} are the way in.
    line = _validate_line(depth, CLOSED, '{"a":' + literal + "}") + "}"
    assert answer_line(line) == '{"error":"malformed line: not JSON"}'


@pytest.mark.parametrize("depth", DEPTHS)
def test_key_order_and_violation_order_do_not_depend_on_depth(depth: int) -> None:
    line = _validate_line(depth, CLOSED, '{"b":1,"10":2,"a":3,"2":4}')
    echoed = _validate_line(depth, CLOSED, '{"2":4,"10":2,"b":1,"a":3}')  # array indices first
    path = '\\"value' + "[0]" * depth
    violations = ",".join(
        f'"{path}.{key}\\" is not a declared property (additionalProperties: false)"'
        for key in ("2", "10", "b", "a")
    )
    assert answer_line(line + "}") == echoed + ',"expected":{"violations":[' + violations + "]}}"


@pytest.mark.parametrize("depth", DEPTHS)
def test_negative_zero_literal_is_negative_zero_at_any_depth(depth: int) -> None:
    line = _validate_line(depth, {"type": "integer"}, "-0")
    echoed = _validate_line(depth, {"type": "integer"}, '{"$negzero":true}')
    violation = '"\\"value' + "[0]" * depth + '\\" must be an integer"'
    assert answer_line(line + "}") == echoed + ',"expected":{"violations":[' + violation + "]}}"


@pytest.mark.parametrize("depth", [0, 2_000])
@pytest.mark.parametrize("digits", [4_300, 4_301, 20_000])
def test_integer_literals_past_the_digit_limit_are_read(digits: int, depth: int) -> None:
    # JSON.parse reads any integer literal (as a double: Infinity here), so the case is answered:
    # not a finite number, as JavaScript says of Infinity; the echo renders it as JSON.stringify
    # renders Infinity.
    line = _validate_line(depth, {"type": "number"}, "9" * digits)
    echoed = _validate_line(depth, {"type": "number"}, "null")
    violation = '"\\"value' + "[0]" * depth + '\\" must be a finite JSON number"'
    assert answer_line(line + "}") == echoed + ',"expected":{"violations":[' + violation + "]}}"


def test_cli_answers_the_whole_recorded_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["oracle", "--input", str(VECTORS)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    cases = _cases(VECTORS)
    assert len(lines) == len(cases)
    for line, case in zip(lines, cases, strict=True):
        answered = json.loads(line)
        assert js_json(answered["expected"]) == _recorded_text(case)
        assert line == js_json(answer_case(case))


def test_cli_mixed_good_and_bad_lines_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "cases.jsonl"
    source.write_text(
        '{"op":"parseArguments","raw":"{\\"b\\":1,\\"1\\":2}"}\n'
        "garbage\n"
        "\n"
        '{"op":"compileValue","spec":{"type":"strin"}}\n'
        '{"op":"validate","schema":{"type":"integer"},"value":{"$negzero":true},"path":"n"}\n',
        encoding="utf-8",
    )
    assert main(["oracle", "--input", str(source)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == [
        '{"op":"parseArguments","raw":"{\\"b\\":1,\\"1\\":2}","expected":{"value":{"1":2,"b":1}}}',
        '{"error":"malformed line: not JSON"}',
        '{"error":"malformed line: blank"}',
        '{"op":"compileValue","spec":{"type":"strin"},"expected":{"throws":'
        '{"name":"JsonSchemaError","message":"unsupported JSON schema: schema.type must be '
        'string/number/integer/boolean/null/array/object/json, or use oneOf",'
        '"code":"UNSUPPORTED_SCHEMA","violations":["schema.type must be '
        'string/number/integer/boolean/null/array/object/json, or use oneOf"]}}}',
        '{"op":"validate","schema":{"type":"integer"},"value":{"$negzero":true},"path":"n",'
        '"expected":{"violations":["\\"n\\" must be an integer"]}}',
    ]


def test_cli_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"op":"assert","schema":{"type":"null"}}\n'))
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["oracle"]) == 0
    assert capsys.readouterr().out == (
        '{"op":"assert","schema":{"type":"null"},"expected":{"ok":true}}\n'
    )


class _BrokenInput:
    def __iter__(self) -> _BrokenInput:
        return self

    def __next__(self) -> bytes:
        raise OSError("device gone")


def test_cli_unreadable_input_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["oracle", "--input", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"python -m trio_harness oracle: cannot read {missing}: ")
    monkeypatch.setattr("sys.stdin", _BrokenInput())
    assert main(["oracle"]) == 2
    assert capsys.readouterr().err == (
        "python -m trio_harness oracle: cannot read standard input: device gone\n"
    )


@pytest.mark.slow
def test_a_100000_deep_parse_arguments_raw_string_is_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = "[" * DEPTH + "-0" + "]" * DEPTH
    value_text = "[" * DEPTH + '{"$negzero":true}' + "]" * DEPTH
    answered = answer_case({"op": "parseArguments", "raw": raw})
    assert js_json(answered["expected"]) == '{"value":' + value_text + "}"
    source = tmp_path / "deep.jsonl"
    source.write_text(json.dumps({"op": "parseArguments", "raw": raw}) + "\n", encoding="utf-8")
    assert main(["oracle", "--input", str(source)]) == 0
    assert capsys.readouterr().out == (
        '{"op":"parseArguments","raw":"' + raw + '","expected":{"value":' + value_text + "}}\n"
    )


@pytest.mark.slow
def test_a_deep_validate_value_is_answered() -> None:
    value_text = "[" * DEPTH + '"x"' + "]" * DEPTH
    schema_text = '{"type":"object","properties":{"a":{"type":"string"}}}'
    line = '{"op":"validate","schema":' + schema_text + ',"value":{"a":' + value_text + "}}"
    assert answer_line(line) == (
        '{"op":"validate","schema":'
        + schema_text
        + ',"value":{"a":'
        + value_text
        + '},"expected":{"violations":["\\"value.a\\" must be a string"]}}'
    )


def test_cli_input_dash_is_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"op":"assert","schema":{"type":"null"}}\n\n'))
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["oracle", "--input", "-"]) == 0
    assert capsys.readouterr() == (
        '{"op":"assert","schema":{"type":"null"},"expected":{"ok":true}}\n'
        '{"error":"malformed line: blank"}\n',
        "",
    )


class _FailingOutput:
    """A standard output whose writes fail (a full disk, a closed pipe)."""

    def __init__(self, error: OSError) -> None:
        self.error = error
        self.buffer = self

    def write(self, data: bytes) -> int:
        raise self.error

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    "error",
    [BrokenPipeError(32, "Broken pipe"), OSError(28, "No space left on device")],
    ids=["EPIPE", "ENOSPC"],
)
def test_cli_write_failure_is_an_output_error_not_an_input_error(
    error: OSError,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "cases.jsonl"
    source.write_text('{"op":"assert","schema":{}}\n' * 3, encoding="utf-8")
    monkeypatch.setattr("sys.stdout", _FailingOutput(error))
    assert main(["oracle", "--input", str(source)]) == 1
    assert capsys.readouterr().err == (
        f"python -m trio_harness oracle: cannot write standard output: {error}\n"
    )


def test_cli_a_closed_output_pipe_ends_the_oracle_quietly() -> None:
    # The real thing: the reader of the oracle's standard output goes away mid-stream (as
    # ``oracle | head -1`` does). The oracle says so once, as an output error, and exits 1: no
    # traceback, no "Exception ignored" from the interpreter's final flush.
    command = [sys.executable, "-m", "trio_harness", "oracle", "--input", "-"]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as oracle:
        assert oracle.stdin is not None
        assert oracle.stdout is not None
        try:
            oracle.stdin.write(b'{"op":"assert","schema":{}}\n')
            oracle.stdin.flush()
            assert (
                oracle.stdout.readline() == b'{"op":"assert","schema":{},"expected":{"ok":true}}\n'
            )
            oracle.stdout.close()  # the reader goes away
            oracle.stdin.write(b'{"op":"assert","schema":{}}\n' * 2)
            oracle.stdin.close()
            status = oracle.wait(timeout=60)
            assert oracle.stderr is not None
            err = oracle.stderr.read().decode()
        finally:
            if oracle.returncode is None:
                oracle.kill()
    assert (status, err) == (
        1,
        "python -m trio_harness oracle: cannot write standard output: [Errno 32] Broken pipe\n",
    )
