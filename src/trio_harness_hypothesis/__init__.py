"""The hypothesis plugin of trio_harness: strategies for the library's value types.

Hypothesis runs :func:`_hypothesis_setup_hook` when it is imported (the ``hypothesis`` entry
point of the trio_harness distribution), the setup hook hypothesis documents for
``st.register_type_strategy``. It never imports trio_harness itself, so ``import hypothesis``
stays fast: it registers the strategies if trio_harness is already imported, and
``import trio_harness`` registers them when hypothesis already is (the library's
``_testing.type_strategies``). Either way, ``st.from_type(trio_harness.ToolCallBlock)`` (and
``st.builds`` of anything taking one) then draws meaningful values.

Registered: ``ToolCallBlock``, ``SubCall``, ``ExecutionMode``, ``ErrorInfo``, ``ToolError``,
``ToolExecutionResult``, ``StepResult``, ``StepOutcome``, and the hook decisions ``Allow``,
``Deny``, ``Ask``, ``Accept``, ``Block`` (and ``trio_harness.testing.ArgumentText``).
:func:`register` does the same by hand (for a run with ``HYPOTHESIS_NO_PLUGINS`` set, or a
source tree that was never installed).
"""

from __future__ import annotations

import sys

__all__ = ["register"]


def register() -> None:
    """Register a strategy for every value type of trio_harness (imports it; idempotent)."""
    from trio_harness._testing import register_type_strategies

    register_type_strategies()


def _hypothesis_setup_hook() -> None:
    """The entry point: register now if trio_harness is imported (else it registers itself)."""
    if "trio_harness" in sys.modules:
        register()
