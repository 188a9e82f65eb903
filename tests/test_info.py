"""python -m pycoll.info: versions, build facts and GPUs, as text and as JSON."""
import json

from conftest import run_python


def test_json_has_the_build_facts():
    result = run_python(["-m", "pycoll.info", "--json"])
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert {"cuda_kernels", "nccl", "mpi", "gpus", "host_kernels", "pycoll", "numpy"} <= set(info)
    assert isinstance(info["cuda_kernels"], bool) and isinstance(info["gpus"], list)
    assert info["host_kernels"] is True, "the host kernels are always built"
    assert info["mpi"]["mpi4py"] and "MPICH" in info["mpi"]["library"]
    for gpu in info["gpus"]:
        assert {"id", "name", "memory_gib", "compute_capability"} <= set(gpu)


def test_text_names_each_component():
    result = run_python(["-m", "pycoll.info"])
    assert result.returncode == 0, result.stderr
    for word in ("pycoll", "MPI", "CuPy", "NCCL", "kernels", "GPUs"):
        assert word in result.stdout
