"""The per-call runtime: definitions, registry, hooks, results, abort and the three-phase pipeline."""
