"""Distributed checkpoints in paddle's format, both ways. tests/data/paddle_dcp holds checkpoints
paddle 3.3.1's save_state_dict wrote on 2 ranks (write_with_paddle.py there says how) and
values.npz, every whole value taken from paddle's tensors: pycoll must load them bit for bit, whole
in this process and into other layouts on 2 ranks (tests/ranks/paddle_dcp.py), and what pycoll
saves must be the metadata paddle writes for the same state (paddle's CPU build loads such a
checkpoint in one process: checked by hand, see the commit message)."""
import dataclasses
import os
import shutil

import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
from conftest import assert_ok, launch
from pycoll.distributed.checkpoint.paddle_metadata import (PADDLE_MODULE, Metadata, paddle_metadata, read_metadata,
                                                           write_metadata)

DATA = os.path.join(os.path.dirname(__file__), "data", "paddle_dcp")
WHOLE = dict(np.load(os.path.join(DATA, "values.npz")))
WHOLE["bf"] = WHOLE["bf"].view(pycoll.bfloat16)  # stored as its bit patterns
PLACED = sorted(k for k in WHOLE if k not in ("s", "c", "r"))  # the keys of placements/


def same_bits(got, key):
    want = WHOLE[key]
    got = np.asarray(got)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (key, got.dtype, got.shape)
    assert got.tobytes() == want.tobytes(), (key, got, want)  # -0.0 in bf, 0-d step included


def test_paddles_checkpoints_load_whole_into_one_process():
    target = {"opt": {}, "model": {}}
    for key in PLACED:
        tensor = pycoll.to_tensor(np.zeros(WHOLE[key].shape, WHOLE[key].dtype))
        if "." in key:  # paddle's opt.* and model.* came from nested dicts: load into nested dicts
            outer, inner = key.split(".", 1)
            target[outer][inner] = tensor
        else:
            target[key] = tensor
    dist.load_state_dict(target, os.path.join(DATA, "placements"))
    for key in PLACED:
        outer, _, inner = key.partition(".")
        same_bits((target[outer][inner] if inner else target[key]).numpy(), key)

    merged = dist.load_merged_state_dict(os.path.join(DATA, "placements"))
    assert sorted(merged) == PLACED
    for key in PLACED:
        same_bits(merged[key].numpy(), key)
    for prefix in ("model", "model."):  # the keys under it, without it
        assert sorted(dist.load_merged_state_dict(os.path.join(DATA, "placements"), prefix=prefix)) == [
            "bias", "weight"]
    for key, tensor in dist.load_merged_state_dict(os.path.join(DATA, "sharded")).items():
        same_bits(tensor.numpy(), key)
    replicas = dist.load_merged_state_dict(os.path.join(DATA, "replicas"))  # b listed twice (replica_id 0, 1)
    assert sorted(replicas) == ["b", "w"]
    same_bits(replicas["w"].numpy(), "w")
    same_bits(replicas["b"].numpy(), "b")


def test_on_two_ranks_into_other_layouts_and_saved_back_as_paddle_saves(tmp_path):
    out = tmp_path / "again"
    assert_ok(launch(2, "paddle_dcp.py", DATA, str(out), timeout=120), expect_lines=2)
    raw = (out / "0.metadata").read_bytes()
    assert PADDLE_MODULE.encode() in raw and b"pycoll" not in raw  # names paddle's classes only
    ours = read_metadata(str(out / "0.metadata"))
    paddles = read_metadata(os.path.join(DATA, "placements", "0.metadata"))
    assert ours["tensors"] == paddles["tensors"]  # whole shapes and paddle's dtype names
    blocks = lambda meta: sorted((p["key"], p["offsets"], p["shape"]) for p in meta["pieces"])  # noqa: E731
    assert blocks(ours) == blocks(paddles)  # the same blocks (which rank writes a replicated one may differ)
    for piece in ours["pieces"]:  # each block in the file the metadata names, as paddle's state dict
        held = pycoll.load(str(out / piece["file"]), return_numpy=True)[piece["key"]]
        assert list(held.shape) == piece["shape"]
    merged = dist.load_merged_state_dict(str(out))
    for key in PLACED:
        same_bits(merged[key].numpy(), key)


def broken_copy(tmp_path, change):
    """placements/ copied, with its metadata changed by ``change(Metadata) -> Metadata``."""
    folder = tmp_path / "ck"
    shutil.copytree(os.path.join(DATA, "placements"), folder)
    meta = read_metadata(str(folder / "0.metadata"))
    paths = {key: tuple(key.split(".", 1)) for key in meta["tensors"]}
    write_metadata(change(paddle_metadata(meta, paths)), str(folder / "0.metadata"))
    return folder


def renamed_file(meta, name):
    storage = {index: (name if index.tensor_key == "w" else f) for index, f in meta.storage_metadata.items()}
    return Metadata(meta.state_dict_metadata, storage, meta.flat_mapping)


def test_what_pycoll_does_not_read_is_refused_by_name(tmp_path):
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "0.metadata").write_bytes(b"\x80\x04\x8c\x02os\x8c\x06system\x93.")
    with pytest.raises(ValueError, match="os.system"):
        dist.load_merged_state_dict(str(tmp_path / "foreign"))

    flattened = broken_copy(tmp_path / "a", lambda meta: Metadata(meta.state_dict_metadata, {
        dataclasses.replace(index, is_flattened=True, flattened_range=(0, 3)): f
        for index, f in meta.storage_metadata.items()}, meta.flat_mapping))
    with pytest.raises(NotImplementedError, match="'w' was saved as flattened blocks"):
        dist.load_merged_state_dict(str(flattened))

    escaping = broken_copy(tmp_path / "b", lambda meta: renamed_file(meta, "../0_0.distcp"))
    with pytest.raises(ValueError, match=r"'\.\./0_0\.distcp', not a '<rank>_<id>\.distcp' file"):
        dist.load_state_dict({"w": pycoll.zeros([5, 4])}, str(escaping))

    elsewhere = broken_copy(tmp_path / "c", lambda meta: renamed_file(meta, "1_0.distcp"))  # w's rows 0-2 are in 0_0
    with pytest.raises(ValueError, match="holds no float32 block of 'w' of shape"):
        dist.load_state_dict({"w": pycoll.zeros([5, 4])}, str(elsewhere))


def test_paddle_s_state_of_a_sharded_parameter_loads_under_the_parameter_s_own_name():
    """paddle renames a shard_tensor'd parameter '<name>.dist', so its optimizer state is saved as
    'linear_0.w_0.dist_moment1_0' (data/paddle_dcp/write_dist_names_with_paddle.py); pycoll keeps
    the name, and the load refused paddle's checkpoint ("has no ['linear_0.w_0_beta1_pow_acc_0',...]")."""
    path = os.path.join(DATA, "dist_names")
    merged = dist.load_merged_state_dict(path)
    assert "linear_0.w_0.dist_moment1_0" in merged and "linear_0.b_0_moment1_0" in merged, sorted(merged)
    target = {key.replace(".dist", ""): pycoll.to_tensor(np.zeros(value.shape, np.float32))
              for key, value in merged.items()}
    dist.load_state_dict(target, path)
    for key, value in merged.items():
        np.testing.assert_array_equal(target[key.replace(".dist", "")].numpy(), value.numpy(), err_msg=key)
    with pytest.raises(ValueError, match=r"has no \['linear_0.w_0_moment3_0'\]"):
        dist.load_state_dict({"linear_0.w_0_moment3_0": pycoll.zeros([4, 2])}, path)
