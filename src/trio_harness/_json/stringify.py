"""JavaScript-exact rendering: ``JSON.stringify`` (compact) of lossless JSON values."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from .lossless import MAX_FINITE_JSON_INT, is_json_value

__all__ = ["ecma_number_to_string", "js_json", "js_json_or_string", "js_number"]

_ONE_E21: Final = 10**21
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: int | float) -> str:
    """Render a number as JavaScript's ``JSON.stringify`` does.

    ``2.0`` → ``2``, ``1e21`` → ``1e+21``, ``1e-7`` → ``1e-7``, ``0.1`` → ``0.1``, ``-0.0`` → ``0``,
    ``nan``/``inf`` → ``null``. An ``int`` below 10**21 in magnitude renders exactly (JavaScript would
    first round it to a double); larger ints render as the double they convert to.
    """
    if type(value) is int or isinstance(value, int):
        if -_ONE_E21 < value < _ONE_E21:
            return str(int(value))
        if abs(value) > MAX_FINITE_JSON_INT:
            return "null"
        value = float(value)
    elif type(value) is float and 1e-4 <= abs(value) < 1e16:
        # Here Python's ``repr`` is the same shortest round-trip digits in the same fixed-point
        # notation (both switch to exponents only outside it), but for an integral value's
        # ".0" (``tests/test_json.py`` checks it against the general rule below).
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return ecma_number_to_string(value)


def ecma_number_to_string(value: float) -> str:
    """ECMA-262's Number::toString (radix 10) of ``value``, spelled out: what
    :func:`js_number` answers for every double."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    # n: position of the decimal point relative to the first significant digit (ECMA-262 "n").
    n = len(whole) + exponent if whole != "0" else exponent - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp_part = ("e+" if e >= 0 else "e-") + str(abs(e))
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + exp_part
    return sign + body


def _js_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def js_json(value: Any) -> str:
    """Compact JSON text of a lossless JSON value, exactly as JavaScript's ``JSON.stringify``.

    Non-ASCII characters are kept, numbers use JavaScript's format, keys keep insertion order.
    Iterative, so any depth renders. Non-JSON leaves render as ``null`` (callers pass JSON).
    """
    out: list[str] = []
    # Each stack item is either a value still to render or a literal string to emit.
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, item = stack.pop()
        if literal:
            out.append(item)
            continue
        kind = type(item)
        if kind is str:
            out.append(_js_string(item))
        elif item is None:
            out.append("null")
        elif kind is bool:
            out.append("true" if item else "false")
        elif isinstance(item, int | float):
            out.append(js_number(item))
        elif isinstance(item, list | tuple):
            out.append("[")
            pending: list[tuple[bool, Any]] = [(True, "]")]
            for index in range(len(item) - 1, -1, -1):
                pending.append((False, item[index]))
                if index:
                    pending.append((True, ","))
            stack.extend(pending)
        elif isinstance(item, dict):
            out.append("{")
            keys = list(item)
            pending = [(True, "}")]
            for index in range(len(keys) - 1, -1, -1):
                key = keys[index]
                pending.append((False, item[key]))
                pending.append((True, _js_string(str(key)) + ":"))
                if index:
                    pending.append((True, ","))
            stack.extend(pending)
        else:
            out.append("null")
    return "".join(out)


def js_json_or_string(value: object) -> str:
    """``js_json`` for JSON values, ``str`` of anything else (used in diagnostic messages)."""
    if is_json_value(value):
        return js_json(value)
    try:
        return str(value)
    except Exception:
        return "<unprintable value>"
