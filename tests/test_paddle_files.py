"""pycoll.load reads the files paddle.save writes, and builds nothing else from them.

tests/data/paddle_linear.pdparams / .pdopt: paddle 3.3.1, ``paddle.seed(7)``, ``Linear(3, 2)``,
``Adam(learning_rate=0.1)``, one step of ``mean(net(x) ** 2)`` with x = arange(12).reshape(4, 3) / 10,
then ``paddle.save(net.state_dict())`` and ``paddle.save(opt.state_dict())``. Paddle's next step
from there gave AFTER_STEP. tests/data/paddle_tree.pd: ``paddle.save({"step": 3, "lr": 0.5,
"names": ("a", "b"), "t": paddle.to_tensor([1.5, 2.5]), "nested": [{"m": paddle.ones([2, 2],
dtype="int64")}]})``.
"""
import pickle
from pathlib import Path

import numpy as np
import pytest

import pycoll

DATA = Path(__file__).resolve().parent / "data"
SAVED_WEIGHT = [[-1.1628179550170898, 0.2459048330783844], [0.5628295540809631, -0.1678074449300766],
                [0.2652103006839752, 0.8319307565689087]]
AFTER_STEP = ([[-1.1270239353179932, 0.1488332748413086], [0.5953564643859863, -0.26479825377464294],
               [0.29524117708206177, 0.735002338886261]], [-0.08810315281152725, -0.19644232094287872])


def test_a_paddle_state_dict_loads_with_paddles_names():
    state = pycoll.load(DATA / "paddle_linear.pdparams")
    assert sorted(state) == ["bias", "weight"]  # paddle's name table is not a key, as in paddle.load
    assert state["weight"].name == "linear_0.w_0" and state["bias"].name == "linear_0.b_0"
    np.testing.assert_array_equal(state["weight"].numpy(), np.float32(SAVED_WEIGHT))
    arrays = pycoll.load(DATA / "paddle_linear.pdparams", return_numpy=True)
    assert isinstance(arrays["weight"], np.ndarray)


def test_training_resumes_from_paddles_weights_and_adam_state_as_paddle_does():
    net = pycoll.nn.Linear(3, 2)
    opt = pycoll.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
    params = pycoll.load(DATA / "paddle_linear.pdparams")
    net.set_state_dict(params)
    # optimizer state is keyed by parameter name: paddle's run named them linear_0.*, this process
    # may have made other Linears first (a fresh process resuming gets the same names)
    renamed = {params[k].name: getattr(net, k).name for k in params}
    state = {}
    for key, value in pycoll.load(DATA / "paddle_linear.pdopt").items():
        old = next(n for n in renamed if key.startswith(n + "_"))
        state[renamed[old] + key[len(old):]] = value
    opt.set_state_dict(state)
    x = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    (net(x) ** 2).mean().backward()
    opt.step()
    np.testing.assert_allclose(net.weight.numpy(), AFTER_STEP[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(net.bias.numpy(), AFTER_STEP[1], rtol=0, atol=1e-6)


def test_any_saved_tree_comes_back_as_paddle_load_gives_it():
    tree = pycoll.load(DATA / "paddle_tree.pd")
    assert tree["step"] == 3 and tree["lr"] == 0.5 and tree["names"] == ("a", "b")
    assert isinstance(tree["t"], pycoll.Tensor)
    np.testing.assert_array_equal(tree["t"].numpy(), np.float32([1.5, 2.5]))
    m = tree["nested"][0]["m"]
    assert m.dtype == np.int64 and m.numpy().tolist() == [[1, 1], [1, 1]]


def test_arrays_paddle_sliced_for_an_old_protocol_are_joined(tmp_path):
    whole = np.arange(10, dtype=np.float32).reshape(2, 5)
    flat = whole.reshape(-1)
    tree = {"w@@.0": flat[:6], "w@@.1": flat[6:],
            "UnpackBigParamInfor@@": {"w": {"OriginShape": (2, 5), "slices": ["w@@.0", "w@@.1"]}},
            "StructuredToParameterName@@": {"w": "linear_3.w_0"}}
    path = tmp_path / "old.pdparams"
    path.write_bytes(pickle.dumps(tree, protocol=2))
    loaded = pycoll.load(path)
    assert list(loaded) == ["w"] and loaded["w"].name == "linear_3.w_0"
    np.testing.assert_array_equal(loaded["w"].numpy(), whole)


class RunsCode:
    def __reduce__(self):
        import os
        return (os.system, ("touch pycoll_ran_code",))


def test_a_file_that_would_run_code_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pdparams"
    path.write_bytes(pickle.dumps({"w": RunsCode()}, protocol=4))
    with pytest.raises(ValueError, match=r"names posix\.system|names os\.system"):
        pycoll.load(path)
    assert not (tmp_path / "pycoll_ran_code").exists()
    path.write_bytes(pickle.dumps({"w": np.array([{"a": 1}], dtype=object)}, protocol=4))
    with pytest.raises(ValueError, match="array of Python objects"):
        pycoll.load(path)
    path.write_bytes(b"\x80\x04garbage")
    with pytest.raises(ValueError, match="looks like a paddle.save file"):
        pycoll.load(path)


def test_a_class_a_file_names_is_refused_as_such_not_as_corruption(tmp_path):
    path = tmp_path / "config.pd"
    path.write_bytes(pickle.dumps({"when": Path("x")}, protocol=4))
    with pytest.raises(ValueError, match=r"cannot be loaded: it names pathlib\.\w*Path, which pycoll does not "
                                         r"build from a paddle file: building a class runs code") as err:
        pycoll.load(path)
    assert "corrupt" not in str(err.value)


def test_arrays_with_no_elements_go_both_ways_at_protocol_2(tmp_path):
    # paddle_empty_protocol2.pd: paddle 3.3.1's paddle.save({"w": paddle.ones([2]), "empty":
    # paddle.zeros([0, 3])}, protocol=2); protocol 2 writes the empty array's data as bytes()
    theirs = pycoll.load(DATA / "paddle_empty_protocol2.pd")
    assert {key: value.shape for key, value in theirs.items()} == {"w": [2], "empty": [0, 3]}
    pycoll.save({"w": pycoll.ones([2]), "empty": pycoll.zeros([0, 3])}, tmp_path / "ours.pd", protocol=2)
    ours = pycoll.load(tmp_path / "ours.pd")
    assert ours["empty"].shape == [0, 3] and ours["w"].numpy().tolist() == [1.0, 1.0]
    path = tmp_path / "big.pd"
    path.write_bytes(b"\x80\x02c__builtin__\nbytes\nJ\x00\x00\x00\x40\x85R.")  # bytes(2 ** 30)
    with pytest.raises(ValueError, match=r"calls bytes with arguments; pycoll allows bytes\(\) only"):
        pycoll.load(path)


def test_bfloat16_comes_back_from_paddles_files_and_pycolls_own(tmp_path):
    """paddle.save writes a bfloat16 tensor as its 16-bit patterns (uint16); paddle.load gives
    bfloat16 back. The bytes below are what paddle 3.3.1 pickled for to_tensor([1., 2.], 'bfloat16')."""
    path = tmp_path / "bf16.pdparams"
    path.write_bytes(pickle.dumps({"w": np.array([16256, 16384], np.uint16)}, protocol=4))
    w = pycoll.load(path)["w"]
    assert w.dtype.name == "bfloat16" and w.numpy().astype(np.float32).tolist() == [1.0, 2.0]
    assert pycoll.load(path, return_numpy=True)["w"].dtype == np.uint16  # as paddle's return_numpy
    t = pycoll.to_tensor([1.0, 2.5], dtype="bfloat16")
    pycoll.save({"t": t, "a": t.numpy()}, tmp_path / "own.pd")
    back = pycoll.load(tmp_path / "own.pd")
    # a raw bfloat16 array is written as paddle's .numpy() gives it, uint16, and read back so
    assert back["t"].dtype.name == "bfloat16" and back["a"].dtype == np.uint16
    assert back["t"].numpy().astype(np.float32).tolist() == [1.0, 2.5]
    assert back["a"].view(t.numpy().dtype).astype(np.float32).tolist() == [1.0, 2.5]
    # and such bits load into a bfloat16 parameter, as paddle's set_state_dict takes them
    layer = pycoll.nn.Linear(2, 1).to(dtype="bfloat16")
    layer.set_state_dict({"weight": np.array([[16256], [16384]], np.uint16), "bias": np.array([16256], np.uint16)})
    assert layer.weight.numpy().astype(np.float32).tolist() == [[1.0], [2.0]]
    layer.set_state_dict({"weight": pycoll.to_tensor(np.array([[16384], [16256]], np.uint16))})  # a tensor of bits
    layer.bias.set_value(np.array([16384], np.uint16))
    assert layer.weight.numpy().astype(np.float32).tolist() == [[2.0], [1.0]] and float(layer.bias) == 2.0
    with pytest.raises(AssertionError, match="mismatched dtypes: weight: dtype uint16, expected float16"):
        pycoll.nn.Linear(2, 1).to(dtype="float16").set_state_dict({"weight": np.zeros([2, 1], np.uint16)})


def test_save_and_load_take_file_objects_as_paddles_do():
    import io
    buffer = io.BytesIO()
    pycoll.save({"w": pycoll.to_tensor([1.5, 2.5])}, buffer)
    buffer.seek(0)
    assert pycoll.load(buffer)["w"].numpy().tolist() == [1.5, 2.5]
    buffer = io.BytesIO((DATA / "paddle_tree.pd").read_bytes())
    assert pycoll.load(buffer)["step"] == 3
    with pytest.raises(TypeError, match="save: path must be a file path"):
        pycoll.save({}, 3)


def test_a_paddle_dtype_kept_in_a_saved_config_loads_as_pycolls_dtype(tmp_path):
    """paddle 3.3.1's ``paddle.save({'dtype': paddle.float32, 'again': paddle.float32,
    'index': paddle.int64}, path)``, byte for byte: a paddle.dtype is built empty and given
    paddle's number of the dtype; the second mention of the same object is that dtype too."""
    path = tmp_path / "config.pd"
    path.write_bytes(bytes.fromhex(
        "8004953a000000000000007d94288c056474797065948c06706164646c6594680193942981944b0a628c0561676169"
        "6e9468048c05696e6465789468032981944b0962752e"))
    loaded = pycoll.load(str(path))
    assert loaded == {"dtype": np.dtype("float32"), "again": np.dtype("float32"), "index": np.dtype("int64")}
    path.write_bytes(path.read_bytes().replace(b"K\n", b"K\x63"))  # a number paddle gives no dtype
    with pytest.raises(ValueError, match="no dtype paddle numbers so"):
        pycoll.load(str(path))
