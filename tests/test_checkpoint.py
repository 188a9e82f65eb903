"""Distributed checkpoints (pycoll.distributed.checkpoint): saved on 2 and 4 ranks and loaded
back in other layouts there (tests/ranks/checkpoint.py); then read whole by this one process."""
import numpy as np
import pytest

import pycoll.distributed as dist
from conftest import assert_ok, launch


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
