"""The pool monitor behind :mod:`trio_harness.testing` (which publishes its names).

* :mod:`.rules` — what the monitor saw of a step, and every rule the pool promises, checked;
* :mod:`.monitor` — :class:`PoolMonitor`, the scheduler wrapper and tracer that records it.
"""

from .monitor import PoolMonitor
from .rules import BodyRecord, PoolViolation

__all__ = ["BodyRecord", "PoolMonitor", "PoolViolation"]
