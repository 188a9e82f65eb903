"""paddle's ``paddle.sysconfig``: where pycoll's C++ headers and its compiled library are, for
building an extension against ``pycoll._C``'s kernels."""
from __future__ import annotations

import importlib.util
import os

__all__ = ["get_include", "get_lib"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The folder of pycoll's C++ headers (``host_kernels.h``, ``cuda_kernels.h``): the source tree's
    ``csrc`` beside the package in a source or editable install. A wheel ships no headers: there the
    answer is ``pycoll/include`` inside the package, paddle's layout, which then does not exist."""
    csrc = os.path.join(os.path.dirname(_PACKAGE), "csrc")
    if os.path.isfile(os.path.join(csrc, "host_kernels.h")):
        return csrc
    return os.path.join(_PACKAGE, "include")


def get_lib() -> str:
    """The folder holding the compiled ``pycoll._C`` library (found without importing it); the
    package folder, where a build puts it, when it has not been built."""
    spec = importlib.util.find_spec("pycoll._C")
    if spec is None or not spec.origin:
        return _PACKAGE
    return os.path.dirname(os.path.abspath(spec.origin))
