"""What the extras promise: CuPy with the NCCL wheel CuPy loads, each for its CUDA major, and
Python versions that those wheels exist for (checked on pyproject.toml; no GPU needed)."""
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib", reason="tomllib arrives with Python 3.11")
PROJECT = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]


def requirements(extra):
    return {Requirement(r).name: Requirement(r) for r in PROJECT["optional-dependencies"][extra]}


@pytest.mark.parametrize("extra, cupy, nccl, oldest", [
    ("cuda12", "cupy-cuda12x", "nvidia-nccl-cu12", "2.18.1"),  # the engine needs ncclCommSplit
    ("cuda13", "cupy-cuda13x", "nvidia-nccl-cu13", "2.27.7"),  # what CuPy 14's cuda13 build asks
])
def test_each_cuda_extra_brings_cupy_and_the_nccl_wheel_of_its_cuda(extra, cupy, nccl, oldest):
    found = requirements(extra)
    assert set(found) == {cupy, nccl}
    versions = found[nccl].specifier
    assert versions.contains(oldest) and versions.contains("2.28.3")
    assert not versions.contains("2.17.0") and not versions.contains("3.0.0")


def test_cupy_14_is_asked_for_only_where_python_has_it():
    assert PROJECT["requires-python"] == ">=3.9"
    for extra in ("cuda13", "test"):
        cupy = requirements(extra)["cupy-cuda13x"]
        assert cupy.marker is not None and not cupy.marker.evaluate({"python_version": "3.9",
                                                                     "platform_system": "Linux",
                                                                     "platform_machine": "x86_64"})
        assert cupy.marker.evaluate({"python_version": "3.10", "platform_system": "Linux",
                                     "platform_machine": "x86_64"})
