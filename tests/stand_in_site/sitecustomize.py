"""GPU tests without a GPU: with ``PYCOLL_TEST_STRICT_GPU=1`` and this folder on ``PYTHONPATH``,
every Python process that starts (pytest, the launcher, each rank, a spawned child) has
tests/strict_cupy.py's stand-in in CuPy's place from its first line, through
tests/ranks/strict_gpu_device.py: one "GPU" over host memory, NCCL's bytes moved over MPI.

``bash bench/run_gpu.sh --cpu`` runs the ``gpu`` tests so, unchanged; what they check there is
pycoll's GPU code paths and the tests' own code (a host array handed to an NCCL group, say), not
CuPy, NCCL or streams. Python imports ``sitecustomize`` once at startup, from the first folder on
``sys.path`` that has one.
"""
import os

if os.environ.get("PYCOLL_TEST_STRICT_GPU"):
    import importlib.util

    _path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ranks",
                         "strict_gpu_device.py")
    _spec = importlib.util.spec_from_file_location("strict_gpu_device", _path)
    _module = importlib.util.module_from_spec(_spec)
    import sys

    sys.modules["strict_gpu_device"] = _module
    _spec.loader.exec_module(_module)
