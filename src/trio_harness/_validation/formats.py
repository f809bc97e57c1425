"""The ``format`` predicates and the decimal-exact ``multipleOf`` of the extended vocabulary.

Leaf tests on one JSON scalar, no schema and no path: :mod:`.extended` builds its checks from them.

* ``format`` (asserted only when a caller asks for it): ``date-time``, ``date``, ``time``
  (RFC 3339), ``email``, ``uri``, ``uuid``, ``ipv4``, ``ipv6``, ``hostname``; other names are
  annotations;
* ``multipleOf``: exact on the shortest round-trip decimals of both numbers (``0.3`` is a multiple
  of ``0.1``, as a reader of the schema means it, where binary floating point says it is not).
"""

from __future__ import annotations

import decimal
import ipaddress
import re
from collections.abc import Callable
from typing import Final

__all__ = ["FORMAT_ASSERTIONS", "is_multiple"]

_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME: Final = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII)
_SPACE: Final = re.compile(r"\s")
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*\Z")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_LABEL: Final = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _is_date(text: str) -> bool:
    match = _DATE.match(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12:
        return False
    days = (31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return 1 <= day <= days


def _is_time(text: str) -> bool:
    match = _TIME.match(text)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), int(match[3])
    if match[6] is not None and (int(match[6]) > 23 or int(match[7]) > 59):
        return False
    return hour <= 23 and minute <= 59 and second <= 60


def _is_date_time(text: str) -> bool:
    date, sep, time = text.partition("T") if "T" in text else text.partition("t")
    return bool(sep) and _is_date(date) and _is_time(time)


def _is_email(text: str) -> bool:
    """``local@domain``: one ``@``, no white space, a non-empty local part and a dot inside the
    domain (not its first or last character). The rule of ``[^\\s@]+@[^\\s@]+\\.[^\\s@]+``,
    checked in one pass: that regular expression backtracks quadratically on long domains."""
    local, at, domain = text.partition("@")
    return (
        bool(at and local)
        and "@" not in domain
        and "." in domain[1:-1]
        and _SPACE.search(text) is None
    )


def _is_ip(text: str, version: int) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == version and "%" not in text


def _is_hostname(text: str) -> bool:
    if not text or len(text) > 253 or not text.isascii():
        return False
    return all(_LABEL.match(label) for label in text.removesuffix(".").split("."))


#: The formats checked when format assertion is on: name → test of a string.
FORMAT_ASSERTIONS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _is_date_time,
    "date": _is_date,
    "time": _is_time,
    "email": _is_email,
    "uri": lambda text: _URI.match(text) is not None,
    "uuid": lambda text: _UUID.match(text) is not None,
    "ipv4": lambda text: _is_ip(text, 4),
    "ipv6": lambda text: _is_ip(text, 6),
    "hostname": _is_hostname,
}


def _decimal(value: int | float) -> decimal.Decimal:
    return decimal.Decimal(value) if type(value) is int else decimal.Decimal(repr(value))


_CONTEXT: Final = decimal.Context(prec=1000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def is_multiple(value: int | float, divisor: int | float) -> bool:
    """Decimal-exact ``multipleOf`` on the shortest round-trip decimals of both numbers."""
    if type(value) is int and type(divisor) is int:
        return value % divisor == 0
    if type(value) is float and value.is_integer() and type(divisor) is int:
        return int(value) % divisor == 0
    remainder = _CONTEXT.remainder(_decimal(value), _decimal(divisor))
    return remainder == 0
