"""What is installed: a distribution's version, read from its metadata without importing it.

The framework engines and the reader engines show the version that runs beside their name.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def framework_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (e.g. ``llama-index-core``), None if it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None
