"""``pycoll.distributed``'s face against paddle 3.3.1's: ``__all__`` holds every name of paddle's
``paddle.distributed.__all__`` that pycoll has, ``from pycoll.distributed import *`` binds them
all, and the upper layers stay unimported until one of their names is asked for."""
import subprocess
import sys

import pytest
from conftest import run_python

import pycoll.distributed as dist

# sorted(paddle.distributed.__all__), printed by paddle 3.3.1's CPU build
PADDLE_ALL = [
    'ColWiseParallel', 'ContextParallel', 'ConvParallel', 'CountFilterEntry', 'DistAttr', 'DistModel',
    'InMemoryDataset', 'LocalLayer', 'ParallelEnv', 'ParallelMode', 'Partial', 'Placement',
    'PrepareContextParallel', 'PrepareLayerInput', 'PrepareLayerOutput', 'ProbabilityEntry', 'ProcessMesh',
    'QueueDataset', 'ReduceOp', 'ReduceType', 'Replicate', 'RowWiseParallel', 'SequenceParallelBegin',
    'SequenceParallelDisable', 'SequenceParallelEnable', 'SequenceParallelEnd', 'Shard', 'ShardedStateDict',
    'ShardedWeight', 'ShardingStage1', 'ShardingStage2', 'ShardingStage3', 'ShowClickEntry', 'SplitPoint',
    'Strategy', 'all_gather', 'all_gather_object', 'all_reduce', 'alltoall', 'alltoall_single', 'barrier',
    'broadcast', 'broadcast_object_list', 'build_sharded_state_dict', 'create_nccl_config',
    'destroy_process_group', 'dtensor_from_fn', 'gather', 'get_backend', 'get_group', 'get_mesh', 'get_rank',
    'get_world_size', 'gloo_barrier', 'gloo_init_parallel_env', 'gloo_release', 'init_parallel_env', 'io',
    'irecv', 'is_available', 'is_initialized', 'isend', 'launch', 'load_merged_state_dict', 'load_state_dict',
    'local_map', 'new_group', 'parallelize', 'recv', 'recv_object_list', 'reduce', 'reduce_scatter', 'reshard',
    'restart_process_group', 'save_state_dict', 'scatter', 'scatter_object_list', 'send', 'send_object_list',
    'set_mesh', 'shard_dataloader', 'shard_layer', 'shard_optimizer', 'shard_scaler', 'shard_tensor',
    'shard_weight', 'shutdown_process_group', 'spawn', 'split', 'to_distributed', 'to_static',
    'unshard_dtensor', 'wait',
]
# paddle's names pycoll does not have (yet): each is absent from the module, not only from __all__
NOT_IN_PYCOLL = {'io'}


def test_all_holds_every_paddle_name_pycoll_has():
    missing = [n for n in PADDLE_ALL if n not in dist.__all__ and n not in NOT_IN_PYCOLL]
    assert not missing, f"in paddle.distributed.__all__, pycoll has them but __all__ lacks them: {missing}"
    for name in NOT_IN_PYCOLL:
        assert not hasattr(dist, name), f"pycoll.distributed has {name}: add it to __all__ and drop it here"


def test_all_has_no_duplicates_and_every_name_resolves():
    assert len(set(dist.__all__)) == len(dist.__all__)
    for name in dist.__all__:
        assert getattr(dist, name) is not None, name


STAR_IMPORT = """
import sys
import pycoll.distributed
upper = ("pycoll.parallel", "pycoll.distributed.auto_parallel", "pycoll.distributed.fleet",
         "pycoll.distributed.dataset", "pycoll.distributed.checkpoint", "pycoll.distributed.launch")
eager = sorted(m for m in sys.modules if m.startswith(upper))
ns = {}
exec("from pycoll.distributed import *", ns)
unbound = [n for n in pycoll.distributed.__all__ if n not in ns]
print(eager, unbound, type(ns["ProcessMesh"]).__name__, ns["Shard"](0).get_dim(), ns["InMemoryDataset"].__name__)
"""


def test_star_import_binds_the_lazy_names_and_plain_import_stays_lazy():
    out = subprocess.run([sys.executable, "-c", STAR_IMPORT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "[]", "type", "0", "InMemoryDataset"]


# (class, arguments, paddle 3.3.1's _to_attr() or the error it raises), measured on its CPU build
ENTRIES = [
    ("ProbabilityEntry", (0.1,), "probability_entry:0.1"), ("ProbabilityEntry", (1e-07,), "probability_entry:1e-07"),
    ("ProbabilityEntry", (0.999999,), "probability_entry:0.999999"), ("ProbabilityEntry", (1,), ValueError),
    ("ProbabilityEntry", (1.0,), ValueError), ("ProbabilityEntry", (0.0,), ValueError),
    ("ProbabilityEntry", ("0.5",), ValueError), ("CountFilterEntry", (0,), "count_filter_entry:0"),
    ("CountFilterEntry", (10,), "count_filter_entry:10"), ("CountFilterEntry", (True,), "count_filter_entry:True"),
    ("CountFilterEntry", (-1,), ValueError), ("CountFilterEntry", (2.0,), ValueError),
    ("ShowClickEntry", ("show", "click"), "show_click_entry:show:click"), ("ShowClickEntry", ("", "c"), "show_click_entry::c"),
    ("ShowClickEntry", ("s", 1), ValueError),
]


@pytest.mark.parametrize("name, args, want", ENTRIES)
def test_entry_attrs_match_paddle(name, args, want):
    cls = getattr(dist, name)
    if want is ValueError:
        with pytest.raises(ValueError, match=name):
            cls(*args)
    else:
        assert cls(*args)._to_attr() == want


def test_a_nan_probability_is_refused():  # paddle's comparisons let NaN through; pycoll refuses it
    with pytest.raises(ValueError, match="probability must be a float in"):
        dist.ProbabilityEntry(float("nan"))


RANK_SCRIPT = """
import numpy as np
import pycoll.distributed as dist
dist.init_parallel_env()
x = np.array([dist.get_rank() + 1.0])
dist.all_reduce(x)
print(f"OK rank={dist.get_rank()} sum={x[0]:g}", flush=True)
"""
CALL_LAUNCH = """
import sys
import pycoll.distributed as dist
assert callable(dist.launch) and dist.launch.__module__ == "pycoll.distributed.launch.main", dist.launch
import pycoll.distributed.launch.logs  # a submodule's import afterwards leaves dist.launch the function
assert dist.launch.__name__ == "launch", dist.launch
sys.argv = ["launch", "--nproc_per_node", "2", "job.py"]
dist.launch()
"""


def test_dist_launch_is_paddles_launcher_function(tmp_path):
    (tmp_path / "job.py").write_text(RANK_SCRIPT)
    result = run_python(["-c", CALL_LAUNCH], timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    logs = sorted(p.name for p in (tmp_path / "log").iterdir())  # paddle's default --log_dir
    assert "workerlog.0" in logs and "workerlog.1" in logs, logs
    assert result.stdout.count("sum=3") == 2, result.stdout


def test_dist_attr_is_paddles_description():
    mesh = dist.ProcessMesh([[2, 4, 5], [0, 1, 3]], dim_names=["x", "y"])
    attr = dist.DistAttr(mesh=mesh, sharding_specs=["x", None, "y"])
    # str, dims_mapping and multi_dims_mapping printed by paddle 3.3.1's CPU build
    assert str(attr) == ("{process_mesh: {shape: [2,3], process_ids: [2,4,5,0,1,3], dim_names: [x,y]}, dim_mappings: "
                         "[[0] [] [1] ], batch_dim: 0, chunk_id: 0, skip_check_mesh: 0, dynamic_dims: [0,0,0], "
                         "annotated: [dims_mapping: 1,process_mesh: 1], partial: [], split_factor: .}")
    assert (attr.dims_mapping, attr.multi_dims_mapping, attr.sharding_specs) == ([0, -1, 1], [[0], [], [1]], ["x", None, "y"])
    assert dist.DistAttr(mesh, ["y", "x"]).dims_mapping == [1, 0] and dist.DistAttr(mesh, []).dims_mapping == []
    assert dist.DistAttr(mesh, ["x"]) == dist.DistAttr(mesh, ["x"]) != dist.DistAttr(mesh, ["y"])
    for args, words in ((("m", ["x"]), "ProcessMesh"), ((mesh, "x"), "list"), ((mesh, ["z"]), "'z'"),
                        ((mesh, ["x", "x"]), "two tensor dimensions")):
        with pytest.raises(ValueError, match=words):
            dist.DistAttr(*args)
