"""paddle's flex-checkpoint ShardedWeight / shard_weight / build_sharded_state_dict through
save_state_dict and load_state_dict on 2 ranks (tests/ranks/sharded_checkpoint.py); then the
checkpoint read whole by this one process."""
import numpy as np

import pycoll.distributed as dist
from conftest import assert_ok, launch


def test_sharded_weights_round_trip_into_other_blocks_and_whole(tmp_path):
    folder = tmp_path / "ckpt"
    assert_ok(launch(2, "sharded_checkpoint.py", str(folder), timeout=90), expect_lines=2)
    merged = dist.load_merged_state_dict(str(folder))
    W = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert sorted(merged) == ["d", "opt.b", "opt.step", "w"]
    np.testing.assert_array_equal(merged["w"].numpy(), W)
    np.testing.assert_array_equal(merged["d"].numpy(), W)
    np.testing.assert_array_equal(merged["opt.b"].numpy(), np.linspace(-1, 1, 5))
    assert int(merged["opt.step"]) == 9
    opt = dist.load_merged_state_dict(str(folder), prefix="opt")  # paddle's: the keys under it, without it
    assert sorted(opt) == ["b", "step"]
    assert dist.load_merged_state_dict(str(folder), prefix="op") == {}  # a dotted name, not any text
    np.testing.assert_array_equal(opt["b"].numpy(), np.linspace(-1, 1, 5))
    own = dist.load_merged_state_dict(str(folder / "own"))
    assert sorted(own) == ["shared", "stage0", "stage1"]
    np.testing.assert_array_equal(own["stage1"].numpy(), W + 1)
