"""Where a rank stands, read from the launcher's environment: pycoll.distributed.placement."""
import sys

import pytest

from pycoll.distributed import placement
from pycoll.distributed.placement import Placement, env_placement


# -- placement from the environment --------------------------------------------------------------
@pytest.mark.parametrize("env, expected", [
    ({}, Placement(0, 1, 0, "single")),
    ({"LOCAL_RANK": "2"}, Placement(0, 1, 2, "single")),
    ({"RANK": "0", "WORLD_SIZE": "1"}, Placement(0, 1, 0, "single")),
    ({"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0"}, Placement(2, 4, 0, "store")),
])
def test_env_placement(env, expected):
    assert env_placement(env) == expected


@pytest.mark.parametrize("env, words", [
    ({"WORLD_SIZE": "2", "LOCAL_RANK": "0"}, ["WORLD_SIZE=2", "RANK is not"]),
    ({"RANK": "1"}, ["RANK=1", "WORLD_SIZE is not"]),
    ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, ["RANK=2", "out of range", "[0, 2)"]),
    ({"RANK": "1", "WORLD_SIZE": "2"}, ["LOCAL_RANK is not set"]),
    ({"RANK": "one", "WORLD_SIZE": "2"}, ["RANK='one'", "integer"]),
    ({"RANK": "0", "WORLD_SIZE": "0"}, ["WORLD_SIZE='0'", ">= 1"]),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "-1"}, ["LOCAL_RANK='-1'"]),
])
def test_env_placement_errors(env, words):
    with pytest.raises(ValueError) as info:
        env_placement(env)
    for word in words:
        assert word in str(info.value)


def test_under_mpi_follows_the_launcher_variables(monkeypatch):
    for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    assert placement.under_mpi() is False
    monkeypatch.setenv("PMI_RANK", "0")
    assert placement.under_mpi() is True




@pytest.mark.parametrize("nodelist, first", [
    ("node7", "node7"), ("gpu[03-08,11],cpu1", "gpu03"), ("a1,b[2-3]", "a1"), ("rack[2]-n[1-4]", "rack2-n[1-4]"),
    ("x[007-010]", "x007"),
])
def test_the_first_host_of_a_slurm_node_list(nodelist, first):
    assert placement.first_host(nodelist) == first


SRUN = {"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "123456",
        "SLURM_STEP_NODELIST": "gpu[07-08]", "SLURM_NTASKS": "4"}


def test_an_srun_step_reads_as_torchrun_variables():
    seen = placement.with_slurm(SRUN)
    assert (seen["RANK"], seen["WORLD_SIZE"], seen["LOCAL_RANK"], seen["MASTER_ADDR"]) == ("3", "4", "1", "gpu07")
    assert seen["MASTER_PORT"] == str(20000 + 123456 % 20000)
    assert env_placement(seen) == Placement(3, 4, 1, "store")
    mine = placement.with_slurm({**SRUN, "MASTER_ADDR": "head", "MASTER_PORT": "29500", "RANK": "2"})
    assert (mine["MASTER_ADDR"], mine["MASTER_PORT"], mine["RANK"]) == ("head", "29500", "2"), "set ones win"


def test_a_batch_script_or_a_one_task_step_is_a_world_of_one():
    batch = {k: v for k, v in SRUN.items() if k != "SLURM_STEP_NUM_TASKS"}  # sbatch's own process
    assert env_placement(placement.with_slurm(batch)) == Placement(0, 1, 0, "single")
    one = {**SRUN, "SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0"}
    assert env_placement(placement.with_slurm(one)) == Placement(0, 1, 0, "single")
