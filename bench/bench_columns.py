"""Would a column-by-column C-level pass prove large arrays of closed objects valid faster?

Usage: ``.venv/bin/python bench/bench_columns.py [--quick]``

Issue 21, third round. The corpus's ``bulk_upsert`` tool (``bench/corpus.json``) sends a
``records`` array of about 1,000 closed objects (``id`` integer, ``name`` string, ``score``
number, required; ``active`` boolean, ``tags`` array of strings, ``meta`` free-form, optional).
The generated check-only code walks it item by item in bytecode. The idea measured here: prove
the whole array valid with C-level iterations (``map``, ``sum``, ``min``/``max``, set unions),
one column at a time, and fall back to the per-item code when the proof fails.

Every figure is the best-of-N mean time per array, divided by its number of items (ns per item):

* the compiled validator on the whole arguments (the per-item code) and jsonschema_rs on the same
  arguments (the target);
* each C-level piece of such a pass alone, and the same checks written as a plain Python loop;
* ``column_pass``: the complete pass for this item schema, written out by hand (what generated code
  would be). Exact-type tests use ``operator.is_`` on ``type(x)``: ``set(map(type, col))`` or
  ``list.count(int)`` would hash or compare the type objects, running a metaclass's
  ``__hash__``/``__eq__`` (user code that can also lie, see
  ``tests/validation/test_reliability.py``).

The script checks that ``column_pass`` accepts every valid case and never accepts a value the
compiled validator rejects (on the tool's invalid cases and on mutated records), so the figure is
one of a correct pass.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections.abc import Callable
from itertools import chain, repeat
from operator import is_
from pathlib import Path
from typing import Any

import jsonschema_rs
from bench_validation import time_per_call, to_subset

from trio_harness._validation import compiled
from trio_harness.lowlevel import compile_validator

_CORPUS = Path(__file__).resolve().parent / "corpus.json"
_BOUND = int(sys.float_info.max)
_DECLARED = frozenset(("id", "name", "score", "active", "tags", "meta"))
_EMPTY: list[object] = []  # the default of an absent ``tags`` (never mutated)
_STR_KEYED = compiled.STR_KEYED_SIZES
_lossless: Callable[[object], bool] = compiled._lossless
_get = dict.get
_getitem = dict.__getitem__


def column_pass(records: Any) -> bool:
    """``True`` only if every record is valid (``False``: not proven; the per-item code decides)."""
    try:
        n = len(records)
        if not all(map(is_, map(type, records), repeat(dict))):
            return False
        if not set(map(dict.__sizeof__, records)) <= _STR_KEYED:
            return False  # some key may not be an exact str: the lookups below could run user code
        if not set().union(*records) <= _DECLARED:
            return False
        column = list(map(_getitem, records, repeat("id", n)))  # KeyError: a required key missing
        if not all(map(is_, map(type, column), repeat(int))):
            return False  # a bool, an integral float or anything else: not proven here
        if n and not (min(column) >= -_BOUND and max(column) <= _BOUND):
            return False
        column = list(map(_getitem, records, repeat("name", n)))
        if not all(map(is_, map(type, column), repeat(str))):
            return False
        column = list(map(_getitem, records, repeat("score", n)))
        if not all(map(is_, map(type, column), repeat(float))):
            return False  # ints among the scores: not proven here
        total = sum(column)  # nan if any is nan, +-inf or nan if any is infinite (or on overflow)
        if total - total != 0.0 or 0.0 in column:  # a zero may be -0.0
            return False
        if not all(
            map(
                is_,
                map(type, map(_get, records, repeat("active", n), repeat(False, n))),
                repeat(bool),
            )
        ):
            return False
        column = list(map(_get, records, repeat("tags", n), repeat(_EMPTY, n)))
        if not all(map(is_, map(type, column), repeat(list))):
            return False
        if not all(map(is_, map(type, chain.from_iterable(column)), repeat(str))):
            return False
        metas = [m for m in map(_get, records, repeat("meta", n), repeat(None, n)) if m is not None]
        return all(map(_lossless, metas))  # None, absent or present, is lossless
    except Exception:
        return False


def _python_loop(records: Any) -> bool:
    """The same checks as the per-item code's inner loop, for the piece-by-piece comparison."""
    small = 2**30 - 1
    for x in records:
        if type(x) is not dict:
            return False
        p = x["id"]
        if type(p) is not int or not -small <= p <= small:
            return False
        if type(x["name"]) is not str:
            return False
    return True


class _Key(str):
    pass


class _Record(dict[str, Any]):
    pass


def _check_exactness(schema: dict[str, Any], cases: list[Any]) -> None:
    validate = compile_validator(schema)
    mutated: list[Any] = []
    base = cases[0]["records"]
    for index, bad in enumerate(
        (True, 1.0, -0.0, math.nan, math.inf, 10**400, None, "x", [1], {"a": 1}, 0.5)
    ):
        for key in ("id", "name", "score", "active", "tags", "meta"):
            records = copy.deepcopy(base)
            records[(index * 37) % len(records)][key] = bad
            mutated.append({"table": "t", "records": records})
    records = copy.deepcopy(base)
    records[5]["extra"] = 1
    mutated.append({"table": "t", "records": records})
    records = copy.deepcopy(base)
    del records[7]["score"]
    mutated.append({"table": "t", "records": records})
    records = copy.deepcopy(base)
    records[9] = {_Key(k): v for k, v in records[9].items()}  # str-subclass keys
    mutated.append({"table": "t", "records": records})
    records = copy.deepcopy(base)
    records[11] = _Record(records[11])
    mutated.append({"table": "t", "records": records})
    for case in cases + mutated:
        if column_pass(case["records"]) and validate(case, "") != []:
            raise AssertionError("column_pass accepted an invalid value")


def main(argv: list[str]) -> None:
    rounds = 3 if "--quick" in argv else 7
    corpus = json.loads(_CORPUS.read_text(encoding="utf-8"))
    tool = next(t for t in corpus["tools"] if t["name"] == "bulk_upsert")
    schema = to_subset(tool["schema"])
    for case in tool["valid"]:
        assert column_pass(case["records"]), "column_pass must accept every valid case"
    _check_exactness(schema, tool["valid"] + tool["invalid"])
    ours = compile_validator(schema)
    rust = jsonschema_rs.validator_for(schema)
    case = tool["valid"][0]
    records = case["records"]
    n = len(records)
    ids = [r["id"] for r in records]
    scores = [r["score"] for r in records]
    metas = [r["meta"] for r in records if "meta" in r]
    rows: list[tuple[str, Callable[[], object]]] = [
        ("compiled validator, whole arguments (per-item code)", lambda: ours(case, "")),
        ("jsonschema_rs iter_errors, whole arguments", lambda: list(rust.iter_errors(case))),
        ("column_pass (complete, by hand)", lambda: column_pass(records)),
        (
            "  exact dicts: all(map(is_, map(type, ...)))",
            lambda: all(map(is_, map(type, records), repeat(dict))),
        ),
        (
            "  exact-str keys: set(map(dict.__sizeof__, ...))",
            lambda: set(map(dict.__sizeof__, records)) <= _STR_KEYED,
        ),
        ("  declared keys: set().union(*records)", lambda: set().union(*records) <= _DECLARED),
        (
            "  a required column: map(dict.__getitem__, ...)",
            lambda: list(map(_getitem, records, repeat("id", n))),
        ),
        (
            "  an optional column: map(dict.get, ...)",
            lambda: list(map(_get, records, repeat("active", n), repeat(False, n))),
        ),
        (
            "  exact ints: all(map(is_, map(type, col)))",
            lambda: all(map(is_, map(type, ids), repeat(int))),
        ),
        (
            "  (unsafe, not usable) set(map(type, col)) <= {int}",
            lambda: set(map(type, ids)) <= {int},
        ),
        ("  int bounds: min() and max()", lambda: min(ids) >= -_BOUND and max(ids) <= _BOUND),
        ("  finite floats: sum()", lambda: sum(scores)),
        ("  no zero (-0.0): 0.0 in col", lambda: 0.0 in scores),
        ("  meta: _lossless of the present values", lambda: all(map(_lossless, metas))),
        (
            "python loop: exact dict, id exact int in bounds, name str",
            lambda: _python_loop(records),
        ),
        ("  plain loop over the records", lambda: [None for _ in records]),
    ]
    print(f"bulk_upsert, {n} records, ns per record (best of {rounds})")
    for label, fn in rows:
        print(f"{label:<62}{time_per_call(fn, rounds, 20) / n:>8.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
