"""Exception groups at API boundaries: one error comes out as itself.

Inside, the library (and the SDKs it drives: the MCP client, Trio's nurseries) uses strict
exception groups. At the boundary of an app-facing ``async with`` or call, Trio's guidance is to
unwrap when there is one error, so that ``except openai.APIError`` or ``except KeyboardInterrupt``
works as written: :func:`sole_exception` finds it, :func:`one_error` re-raises it bare.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trio

from .._runtime import group_leaves

__all__ = ["one_error", "sole_exception"]


def sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one error a (nested) group stands for, or ``None`` when it holds several.

    ``trio.Cancelled`` leaves next to one other exception are left out: they belong to a cancel
    scope that is being unwound anyway, and Trio delivers them again at the next checkpoint.
    """
    leaves = group_leaves(group)
    if len(leaves) == 1:
        return leaves[0]
    others = [leaf for leaf in leaves if not isinstance(leaf, trio.Cancelled)]
    return others[0] if len(others) == 1 else None


@contextmanager
def one_error() -> Iterator[None]:
    """Re-raise an exception group that stands for one error as that error itself.

    The error keeps its traceback and its explicit cause; the group is not shown as its context.
    A group of several errors passes unchanged.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        sole = sole_exception(group)
        if sole is None:
            raise
        raise sole from sole.__cause__
