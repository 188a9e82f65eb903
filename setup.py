"""Build pycoll's compiled part, the pybind11 extension ``pycoll._C``, from ``csrc/``.

Project metadata lives in pyproject.toml; this file only describes the extension: the host (C++)
kernels always, and the CUDA kernels (``csrc/*.cu``) when nvcc is found. nvcc compiles those into
objects that are linked into the same extension together with the static CUDA runtime, so that
``import pycoll._C`` works on a machine without a GPU driver (the runtime looks for the driver on
its first call). Works for ``pip install .`` and ``pip install -e .`` (the editable install builds
``pycoll/_C*.so`` into the source tree).

Environment:
    PYCOLL_CUDA       auto (the default): build the CUDA kernels if nvcc is found; 1: build them,
                      and stop if nvcc is missing; 0: build the host kernels only.
    PYCOLL_CUDA_ARCH  the GPU architectures, ";"-separated, default "75;80;90+PTX": machine code
                      for each (sm_75: T4; sm_80: A100 and the other 8.x GPUs; sm_90: H100, H200),
                      plus PTX for those marked "+PTX", which newer GPUs compile when loading it.
                      "9.0" is read as "90", "90a" is allowed.
    CUDA_HOME         where to look for bin/nvcc when it is not on PATH.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

# C++ sources of pycoll._C: the kernels (no Python in them) and their bindings.
HOST_SOURCES = ["csrc/host_kernels.cpp", "csrc/host_math.cpp", "csrc/host_adam.cpp", "csrc/host_rnn.cpp",
                "csrc/host_image.cpp", "csrc/bindings.cpp"]
HOST_HEADERS = ["csrc/host_kernels.h", "csrc/host_math.h", "csrc/host_adam.h", "csrc/host_rnn.h", "csrc/host_image.h",
                "csrc/host_exp.h", "csrc/simd_clones.h"]  # rebuild triggers; also shipped in the sdist
CUDA_SOURCES = ["csrc/cuda_kernels.cu", "csrc/cuda_adam.cu"]
CUDA_HEADERS = ["csrc/cuda_kernels.h", "csrc/cuda_adam.h", "csrc/cuda_runtime_util.cuh"]
DEFAULT_CUDA_ARCH = "75;80;90+PTX"


def compile_args() -> list:
    """Optimise fully, for the baseline CPU only (no -march: the wheel must run anywhere).
    The copy loops rely on auto-vectorization, which -fno-trapping-math allows for the float16
    ones (it assumes FP exceptions do not trap, as they do not by default, and changes no value).
    No FMA contraction: results must round exactly as NumPy's do."""
    if sys.platform == "win32":
        return ["/O2", "/fp:precise"]
    return ["-O3", "-fno-trapping-math", "-ffp-contract=off"]


def notice(message: str) -> None:
    print(f"setup.py: {message}", file=sys.stderr)


@dataclass(frozen=True)
class CudaBuild:
    nvcc: str
    archs: str  # normalised PYCOLL_CUDA_ARCH, as build_info() reports it
    lib_dir: str  # where libcudart_static.a is

    def gencode_flags(self) -> List[str]:
        flags = []
        for item in self.archs.split(";"):
            arch, ptx = item.removesuffix("+PTX"), item.endswith("+PTX")
            flags.append(f"-gencode=arch=compute_{arch},code=sm_{arch}")
            if ptx:
                flags.append(f"-gencode=arch=compute_{arch},code=compute_{arch}")
        return flags


def parse_archs(value: str) -> str:
    """PYCOLL_CUDA_ARCH normalised: "7.5; 80,9.0+ptx" -> "75;80;90+PTX"."""
    archs = []
    for item in re.split(r"[;,\s]+", value.strip()):
        if not item:
            continue
        m = re.fullmatch(r"(\d+)(?:\.(\d))?([a-z]?)(\+ptx)?", item, re.IGNORECASE)
        if m is None or (m.group(2) is None and len(m.group(1)) < 2):
            raise SystemExit(
                f"setup.py: PYCOLL_CUDA_ARCH: {item!r} is not an architecture; "
                'use e.g. "75;80;90+PTX" or "8.0;9.0+PTX"'
            )
        major, minor, suffix, ptx = m.groups()
        archs.append(major + (minor or "") + suffix.lower() + ("+PTX" if ptx else ""))
    if not archs:
        raise SystemExit("setup.py: PYCOLL_CUDA_ARCH is empty; unset it for the default")
    return ";".join(archs)


def find_nvcc() -> Optional[str]:
    found = shutil.which("nvcc")
    if found is None and os.environ.get("CUDA_HOME"):
        found = shutil.which("nvcc", path=os.path.join(os.environ["CUDA_HOME"], "bin"))
    return found


def cudart_dir(nvcc: str) -> str:
    """The directory of libcudart_static.a, from the library paths nvcc itself links with."""
    dry = subprocess.run(
        [nvcc, "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
        capture_output=True, text=True, check=False,
    )
    for line in (dry.stdout + dry.stderr).splitlines():
        if line.startswith("#$ LIBRARIES="):
            for arg in shlex.split(line.split("=", 1)[1]):
                path = arg[2:] if arg.startswith("-L") else None
                if path and os.path.isfile(os.path.join(path, "libcudart_static.a")):
                    return os.path.normpath(path)
    raise SystemExit(f"setup.py: no libcudart_static.a in the library paths of {nvcc}")


def cuda_build() -> Optional[CudaBuild]:
    """What to build the CUDA kernels with, or None for a host-only build (PYCOLL_CUDA)."""
    mode = os.environ.get("PYCOLL_CUDA", "auto").strip().lower() or "auto"
    if mode not in ("0", "1", "auto"):
        raise SystemExit(f"setup.py: PYCOLL_CUDA must be 0, 1 or auto, got {mode!r}")
    if mode == "0":
        notice("PYCOLL_CUDA=0: building the host kernels only")
        return None
    nvcc = find_nvcc()
    if nvcc is None or not sys.platform.startswith("linux"):
        why = "nvcc is not on PATH (nor in CUDA_HOME/bin)" if nvcc is None else (
            "the CUDA kernels build on Linux only")
        if mode == "1":
            raise SystemExit(f"setup.py: PYCOLL_CUDA=1, but {why}")
        notice(f"{why}: building the host kernels only")
        return None
    archs = parse_archs(os.environ.get("PYCOLL_CUDA_ARCH", DEFAULT_CUDA_ARCH))
    return CudaBuild(nvcc=nvcc, archs=archs, lib_dir=cudart_dir(nvcc))


def newer(sources: List[str], target: str) -> bool:
    """Whether target is missing or older than any of sources."""
    if not os.path.exists(target):
        return True
    built = os.path.getmtime(target)
    return any(os.path.getmtime(s) > built for s in sources)


class BuildExt(build_ext):
    """pybind11's build_ext, plus the CUDA kernels (setuptools compiles no .cu itself)."""

    def build_extension(self, ext):
        cuda = cuda_build()
        os.makedirs(self.build_temp, exist_ok=True)
        # The build's configuration, rewritten only when it changes: a dependency of the
        # extension, so that switching PYCOLL_CUDA or the architectures rebuilds it.
        stamp = os.path.join(self.build_temp, "pycoll_build_config.txt")
        config = f"cuda {cuda.nvcc} {cuda.archs}\n" if cuda else "host only\n"
        if not os.path.exists(stamp) or Path(stamp).read_text() != config:
            Path(stamp).write_text(config)
        ext.depends = [*ext.depends, stamp]
        if cuda:
            objects = [self.nvcc_compile(cuda, source, stamp) for source in CUDA_SOURCES]
            ext.extra_objects = [*ext.extra_objects, *objects]
            ext.define_macros = [
                *ext.define_macros,
                ("PYCOLL_WITH_CUDA", "1"),
                ("PYCOLL_CUDA_ARCH", f'"{cuda.archs}"'),  # a C string, for build_info()
            ]
            ext.library_dirs = [*ext.library_dirs, cuda.lib_dir]
            ext.libraries = [*ext.libraries, "cudart_static", "rt", "pthread", "dl"]
            # The runtime's symbols stay inside pycoll._C: its kernels must register with its own
            # runtime even where another one (CuPy's, PyTorch's) is loaded globally.
            ext.extra_link_args = [*ext.extra_link_args, "-Wl,--exclude-libs,libcudart_static.a"]
        super().build_extension(ext)

    def nvcc_compile(self, cuda: CudaBuild, source: str, stamp: str) -> str:
        obj = os.path.join(self.build_temp, Path(source).with_suffix(".o").name)
        if self.force or newer([source, *CUDA_HEADERS, *HOST_HEADERS, stamp], obj):
            command = [
                cuda.nvcc, "-c", source, "-o", obj, "-std=c++17", "-O3",
                "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden",
                "--threads", "0",  # one per core, across the architectures
                *cuda.gencode_flags(),
            ]
            notice(f"nvcc for {cuda.archs}: {' '.join(command)}")
            if subprocess.run(command, check=False).returncode != 0:
                raise SystemExit(f"setup.py: nvcc failed on {source} (its messages are above)")
        return obj


setup(
    ext_modules=[
        Pybind11Extension(
            "pycoll._C",
            sources=HOST_SOURCES,
            depends=HOST_HEADERS + CUDA_SOURCES + CUDA_HEADERS,
            include_dirs=["csrc"],
            cxx_std=17,
            extra_compile_args=compile_args(),
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
