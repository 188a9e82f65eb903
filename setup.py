"""Build pycoll's compiled part, the pybind11 extension ``pycoll._C``, from ``csrc/``.

Project metadata lives in pyproject.toml; this file only describes the extension. Works for
``pip install .`` and ``pip install -e .`` (the editable install builds ``pycoll/_C*.so`` into the
source tree).

Environment:
    PYCOLL_CUDA  0 (default) builds the host (C++) kernels only. 1 asks for the CUDA kernels,
                 which this source tree does not have yet, so the build stops and says so.
"""

import os
import sys

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

# C++ sources of pycoll._C: the kernels (no Python in them) and their bindings.
HOST_SOURCES = ["csrc/host_kernels.cpp", "csrc/bindings.cpp"]
HOST_HEADERS = ["csrc/host_kernels.h"]  # rebuild triggers; also shipped in the sdist


def cuda_requested() -> bool:
    """Whether the environment asks for the CUDA kernels (PYCOLL_CUDA=1; 0 or unset: no)."""
    value = os.environ.get("PYCOLL_CUDA", "0").strip()
    if value not in ("0", "1"):
        raise SystemExit(f"setup.py: PYCOLL_CUDA must be 0 or 1, got {value!r}")
    return value == "1"


def compile_args() -> list:
    """Optimise fully, for the baseline CPU only (no -march: the wheel must run anywhere).
    The copy loops rely on auto-vectorization, which -fno-trapping-math allows for the float16
    ones (it assumes FP exceptions do not trap, as they do not by default, and changes no value).
    No FMA contraction: results must round exactly as NumPy's do."""
    if sys.platform == "win32":
        return ["/O2", "/fp:precise"]
    return ["-O3", "-fno-trapping-math", "-ffp-contract=off"]


if cuda_requested():
    raise SystemExit(
        "setup.py: PYCOLL_CUDA=1, but this source tree has no CUDA kernels yet "
        "(csrc/ holds the host kernels only); build with PYCOLL_CUDA=0 or unset it"
    )

setup(
    ext_modules=[
        Pybind11Extension(
            "pycoll._C",
            sources=HOST_SOURCES,
            depends=HOST_HEADERS,
            include_dirs=["csrc"],
            cxx_std=17,
            extra_compile_args=compile_args(),
        )
    ],
    cmdclass={"build_ext": build_ext},
)
