"""What a test costs the machine in CPU seconds (tests/conftest.py writes it under GINENV_TEST_CPU)."""

from __future__ import annotations

import resource


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user and system) of this process and of its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime
