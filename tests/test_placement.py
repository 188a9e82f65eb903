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


