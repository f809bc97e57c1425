"""Mechanism 1: the JSON-Schema subset, its reference walker, the compiled validator and the author DSL."""
