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
    assert not {"host_kernels", "cuda_kernels"} & set(info["kernels"]), "each fact is said once"
    assert info["mpi"]["mpi4py"] and "MPICH" in info["mpi"]["library"]
    for gpu in info["gpus"]:
        assert {"id", "name", "memory_gib", "compute_capability"} <= set(gpu)


def test_text_names_each_component():
    result = run_python(["-m", "pycoll.info"])
    assert result.returncode == 0, result.stderr
    for word in ("pycoll", "MPI", "CuPy", "NCCL", "kernels", "GPUs"):
        assert word in result.stdout


def test_no_library_prints_its_own_warnings_and_a_missing_nccl_is_explained_once():
    """CuPy warns when it cannot load libnccl; pycoll says it once, in the NCCL line."""
    result = run_python(["-m", "pycoll.info", "--json"])
    assert result.returncode == 0 and result.stderr == "", result.stderr
    info = json.loads(result.stdout)
    if info["nccl"] is None:
        assert info["nccl_missing"], "a missing NCCL says why"
        text = run_python(["-m", "pycoll.info"])
        assert text.stderr == "" and f"not available ({info['nccl_missing']})" in text.stdout
    quiet = run_python(["-c", "import pycoll, pycoll.distributed, pycoll.nn"])
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
