"""Mechanism 2: the parallel execution pool (pure state machine, Trio driver, step API)."""
