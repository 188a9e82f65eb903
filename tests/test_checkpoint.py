"""Distributed checkpoints (pycoll.distributed.checkpoint): saved on 2 and 4 ranks and loaded
back in other layouts there (tests/ranks/checkpoint.py); then read whole by this one process."""
import numpy as np
import pytest

import pycoll.distributed as dist
from conftest import assert_ok, launch, launch_source


@pytest.mark.parametrize("nprocs", [2, 4])
def test_a_checkpoint_loads_into_any_layout_and_whole_into_one_process(nprocs, tmp_path):
    folder = tmp_path / "ckpt"
    assert_ok(launch(nprocs, "checkpoint.py", str(folder), timeout=120), expect_lines=nprocs)
    merged = dist.load_merged_state_dict(str(folder), unique_id=0)
    np.testing.assert_array_equal(merged["w"].numpy(), np.arange(40, dtype=np.float32).reshape(5, 8))
    np.testing.assert_array_equal(merged["opt.b"].numpy(), np.linspace(-1, 1, 6))
    assert merged["opt.step"].shape == [] and int(merged["opt.step"]) == 7


def test_what_a_checkpoint_cannot_be_is_refused_by_name(tmp_path):
    with pytest.raises(NotImplementedError, match="safetensors=True"):
        dist.load_merged_state_dict(str(tmp_path), safetensors=True)
    with pytest.raises(TypeError, match="state_dict must be a dict"):
        dist.save_state_dict([1], str(tmp_path))


HALF_RESUME = '''
import os, sys
import numpy as np
import pycoll, pycoll.distributed as dist
from pycoll.distributed.checkpoint.state_dict import PeerCannotLoad

dist.init_parallel_env()
rank, folder = dist.get_rank(), sys.argv[1]
mesh = dist.ProcessMesh([0, 1])
w = dist.shard_tensor(pycoll.to_tensor(np.arange(32, dtype=np.float32).reshape(4, 8)), mesh, [dist.Shard(0)])
dist.save_state_dict({"w": w}, folder)
dist.barrier()
if rank == 0:
    os.remove(os.path.join(folder, "1_0.distcp"))  # rank 1's rows are gone
dist.barrier()
fresh = dist.shard_tensor(pycoll.full([4, 8], -1.0), mesh, [dist.Shard(0)])
try:
    dist.load_state_dict({"w": fresh}, folder)
except PeerCannotLoad as exc:
    assert rank == 0 and "rank 1 cannot load its part" in str(exc) and "1_0.distcp" in str(exc), exc
except FileNotFoundError as exc:
    assert rank == 1 and "1_0.distcp" in str(exc) and "incomplete" in str(exc), exc
else:
    raise AssertionError("a rank loaded a checkpoint its peer cannot read")
assert (fresh._local_value().numpy() == -1).all()  # nothing loaded anywhere: no rank half-resumed
print(f"half resume OK rank={rank}")
'''


def test_a_checkpoint_one_rank_cannot_read_is_loaded_by_no_rank(tmp_path):
    # paddle 3.3.1 asserts on every rank ("The checkpoint files are not complete"); pycoll's rank 0
    # loaded its half and rank 1 raised (a probe)
    assert_ok(launch_source(tmp_path, HALF_RESUME, 2, str(tmp_path / "ckpt"), timeout=90), expect_lines=2)


def test_keys_the_checkpoint_holds_beyond_the_state_dict_are_said_not_loaded(tmp_path, caplog):
    """paddle warns "Unexpected keys: ..., these keys exist in checkpoint but not in state_dict"."""
    import pycoll

    dist.save_state_dict({"a": pycoll.ones([2]), "b": pycoll.zeros([3])}, str(tmp_path))
    fresh = {"a": pycoll.zeros([2])}
    with caplog.at_level("WARNING", logger="pycoll"):
        dist.load_state_dict(fresh, str(tmp_path))
    assert fresh["a"].numpy().tolist() == [1.0, 1.0]
    assert "also holds 1 key(s) this state_dict has not, not loaded: ['b']" in caplog.text
