"""``pycoll.utils.require_version``: paddle's check that the installed version lies in a range.

Scripts written for paddle state paddle versions (``require_version('2.4')``), so the version
checked is the paddle API pycoll follows, ``PADDLE_API_VERSION`` (3.3.1), not pycoll's own
release number (``pycoll.version.full_version``, 0.1.0), which no paddle script could ask for.
``pycoll.utils.deprecated`` compares its ``since`` with the same version.
"""
from __future__ import annotations

import re
from typing import List, Optional

from pycoll import version

PADDLE_API_VERSION = "3.3.1"
_FORMAT = re.compile(r"\d+(\.\d+){0,3}")


class VersionError(Exception):
    """The installed version is outside the range a script requires (paddle raises a plain
    Exception whose message starts with "VersionError:"; this is one)."""


def _checked(value: Optional[str], name: str) -> Optional[List[int]]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"require_version: {name} must be a str, got {type(value).__name__}")
    if not _FORMAT.fullmatch(value):
        raise ValueError(f"require_version: {name} must be in format '\\d+(\\.\\d+){{0,3}}', like '1.5.2.0', "
                         f"got {value!r}")
    return padded(value)


def padded(text: str) -> List[int]:
    """'3.3' -> [3, 3, 0, 0]: a version's numbers, four of them (parts that are not numbers are
    left out, as paddle's ``deprecated`` reads versions)."""
    parts = [int(p) for p in text.split(".") if p.isdigit()]
    return parts + [0] * (4 - len(parts))


def require_version(min_version: str, max_version: Optional[str] = None) -> None:
    """Raise VersionError unless min_version <= PADDLE_API_VERSION (<= max_version when given)."""
    if not isinstance(min_version, str):
        raise TypeError(f"require_version: min_version must be a str, got {type(min_version).__name__}")
    low, high = _checked(min_version, "min_version"), _checked(max_version, "max_version")
    installed = padded(PADDLE_API_VERSION)
    if installed < low or (high is not None and installed > high):  # type: ignore[operator]
        wanted = f"in [{min_version}, {max_version}]" if high is not None else f"{min_version} or higher"
        raise VersionError(f"VersionError: PaddlePaddle version {wanted} required, but pycoll {version.full_version} "
                           f"follows PaddlePaddle {PADDLE_API_VERSION}.")
