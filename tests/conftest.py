"""Shared pytest configuration: hypothesis profiles.

The ``ci`` profile (chosen when ``CI`` is set, as on the CI machine, or with ``HYPOTHESIS_PROFILE=ci``)
runs more examples than the default profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
