"""pycoll.save writes paddle.save's files: for the same input the tree paddle 3.3.1 pickles, read
back as paddle.load gives it, and nothing that pycoll.load would not build.

Fixtures in tests/data, written by paddle 3.3.1:
- paddle_save_tree_p2.pd / paddle_save_tree_p4.pd: ``paddle.save(tree(), path, protocol=2 / 4)``
  with ``tree()`` below run with paddle in place of pycoll (``sed 's/\\bpycoll\\b/paddle/g'``);
- paddle_adam_step.pdparams / .pdopt: ``paddle.save(net.state_dict())`` and
  ``paddle.save(opt.state_dict())`` after ``trained_linear()`` below, run with paddle (where the
  first Linear is named linear_0 without renaming it).
Each is compared with pycoll's file after unpickling both with the plain pickle module, so the
comparison does not go through pycoll's reader.
"""
import argparse
import collections
import io
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

import pycoll
from pycoll.paddle_files import NAME_TABLE, SLICED, saved_state_dict

DATA = Path(__file__).resolve().parent / "data"


def named(t, name):
    t.name = name
    return t


def tree():
    w = named(pycoll.to_tensor([[1.5, -2.0], [0.25, 3.0]]), "w")
    return {
        "w": w, "again": w,
        "bf": named(pycoll.to_tensor([1.0, 2.5], dtype="bfloat16"), "bf"),
        "loss": named(pycoll.to_tensor(2.5), "loss"),
        "idx": named(pycoll.arange(6, dtype="int64").reshape([2, 3]), "idx"),
        "c": named(pycoll.to_tensor([1 + 2j], dtype="complex64"), "c"),
        "raw": np.arange(4, dtype=np.int16),
        "scalar": np.float32(1.5), "count": np.int64(7),
        "args": argparse.Namespace(lr=0.1, name="run", dims=[2, 3]),
        "tags": {1, 2, 3}, "z": complex(1, -2), "dtype": np.dtype("float32"),
        (1, "pair"): "tuple key", 7: "int key",
        "ordered": collections.OrderedDict([("b", 1), ("a", named(pycoll.ones([2], dtype="float64"), "od"))]),
        "nested": [1, 2.5, "text", None, True, (named(pycoll.to_tensor([3, 4], dtype="int32"), "inner"), {"k": 3}),
                   slice(1, 5)],
    }


def trained_linear():
    net = pycoll.nn.Linear(3, 2)
    net.weight.name, net.bias.name = "linear_0.w_0", "linear_0.b_0"  # paddle's first Linear
    net.weight.set_value(pycoll.to_tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]))
    net.bias.set_value(pycoll.to_tensor([0.1, -0.1]))
    sched = pycoll.optimizer.lr.StepDecay(0.1, step_size=2)
    opt = pycoll.optimizer.Adam(learning_rate=sched, parameters=net.parameters())
    x = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    (net(x) ** 2).mean().backward()
    opt.step()
    sched.step()
    return net, opt


def plain_unpickle(data):
    return pickle.loads(data, encoding="latin1")  # paddle.load's own call


def assert_same(ours, paddles, where="file", close=False):
    """The same tree: types, order, dtypes, shapes and values (`close`: values to 1e-6)."""
    assert type(ours) is type(paddles), f"{where}: {type(ours).__name__} != {type(paddles).__name__}"
    if isinstance(paddles, np.ndarray):
        assert (ours.dtype, ours.shape) == (paddles.dtype, paddles.shape), where
        if close:
            np.testing.assert_allclose(ours, paddles, rtol=0, atol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(ours, paddles, err_msg=where)
    elif isinstance(paddles, dict):
        assert list(ours) == list(paddles), where
        for key in paddles:
            assert_same(ours[key], paddles[key], f"{where}[{key!r}]", close)
    elif isinstance(paddles, (list, tuple)):
        assert len(ours) == len(paddles), where
        for i, (a, b) in enumerate(zip(ours, paddles)):
            assert_same(a, b, f"{where}[{i}]", close)
    elif isinstance(paddles, argparse.Namespace):
        assert_same(vars(ours), vars(paddles), where, close)
    else:
        assert ours == paddles and type(ours) is type(paddles), where


@pytest.mark.parametrize("protocol", [2, 4])
def test_a_tree_is_written_as_paddle_writes_it(protocol):
    buffer = io.BytesIO()
    pycoll.save(tree(), buffer, protocol=protocol)
    data = buffer.getvalue()
    assert data[:2] == bytes([0x80, protocol])
    ours = plain_unpickle(data)
    paddles = plain_unpickle((DATA / f"paddle_save_tree_p{protocol}.pd").read_bytes())
    assert_same(ours, paddles)
    assert ours["again"] is ours["w"] and paddles["again"] is paddles["w"]  # one tensor, written once
    assert ours["bf"][1].dtype == np.uint16  # bfloat16 as its 16-bit patterns, as paddle writes it


def test_layer_and_optimizer_state_dicts_are_written_as_paddle_writes_them():
    net, opt = trained_linear()
    for state, name in ((net.state_dict(), "pdparams"), (opt.state_dict(), "pdopt")):
        buffer = io.BytesIO()
        pycoll.save(state, buffer)
        ours = plain_unpickle(buffer.getvalue())
        paddles = plain_unpickle((DATA / f"paddle_adam_step.{name}").read_bytes())
        # pycoll's Adam keeps its beta powers in float64 (paddle: float32): the layout is what is compared
        for key, value in ours.items():
            if "_pow_acc_" in key:
                ours[key] = value.astype(paddles[key].dtype)
        assert_same(ours, paddles, name, close=True)
    assert paddles["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.1}
    assert paddles[NAME_TABLE]["linear_0.w_0_moment1_0"] == "linear_0.w_0_moment1_0"


def test_paddles_files_load_as_paddle_loads_them():
    """What paddle 3.3.1's paddle.load gave for the same files (types, names, dtypes)."""
    for protocol in (2, 4):
        got = pycoll.load(DATA / f"paddle_save_tree_p{protocol}.pd")
        for key, name, dtype, shape in (("w", "w", "float32", [2, 2]), ("bf", "bf", "bfloat16", [2]),
                                        ("loss", "loss", "float32", []), ("idx", "idx", "int64", [2, 3]),
                                        ("c", "c", "complex64", [1])):
            t = got[key]
            assert isinstance(t, pycoll.Tensor) and (t.name, t.dtype.name, t.shape) == (name, dtype, shape)
        assert got["bf"].numpy().astype(np.float32).tolist() == [1.0, 2.5]
        assert isinstance(got["again"], pycoll.Tensor) and got["again"].name == "w"
        assert type(got["raw"]) is np.ndarray and got["raw"].dtype == np.int16  # a bare array stays one
        assert type(got["scalar"]) is np.float32 and got["scalar"] == 1.5
        assert type(got["count"]) is np.int64 and got["count"] == 7
        assert got["args"] == argparse.Namespace(lr=0.1, name="run", dims=[2, 3])
        assert got["tags"] == {1, 2, 3} and got["z"] == complex(1, -2) and got["dtype"] == np.dtype("float32")
        assert got[(1, "pair")] == "tuple key" and got[7] == "int key"
        assert type(got["ordered"]) is collections.OrderedDict and list(got["ordered"]) == ["b", "a"]
        assert got["ordered"]["a"].name == "od" and got["ordered"]["a"].dtype == np.float64
        inner = got["nested"][5]
        assert type(inner) is tuple and inner[0].name == "inner" and inner[1] == {"k": 3}
        assert got["nested"][6] == slice(1, 5)
        arrays = pycoll.load(DATA / f"paddle_save_tree_p{protocol}.pd", return_numpy=True)
        assert type(arrays["w"]) is np.ndarray and arrays["bf"].dtype == np.uint16 and arrays["loss"].shape == ()
    state = pycoll.load(DATA / "paddle_adam_step.pdopt")
    assert state["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.1} and NAME_TABLE not in state
    assert state["linear_0.w_0_moment1_0"].name == "linear_0.w_0_moment1_0"
    kept = pycoll.load(DATA / "paddle_adam_step.pdparams", keep_name_table=True)
    assert kept[NAME_TABLE] == {"weight": "linear_0.w_0", "bias": "linear_0.b_0"}


def test_training_resumes_from_pycolls_files_as_from_paddles():
    net, opt = trained_linear()
    for state, name in ((net.state_dict(), "pdparams"), (opt.state_dict(), "pdopt")):
        buffer = io.BytesIO()
        pycoll.save(state, buffer)
        buffer.seek(0)
        ours, paddles = pycoll.load(buffer), pycoll.load(DATA / f"paddle_adam_step.{name}")
        assert list(ours) == list(paddles)
        for key in paddles:
            if isinstance(paddles[key], pycoll.Tensor):
                assert isinstance(ours[key], pycoll.Tensor) and ours[key].name == paddles[key].name
                np.testing.assert_allclose(ours[key].numpy(), paddles[key].numpy(), rtol=0, atol=1e-6)
            else:
                assert ours[key] == paddles[key]
    net2 = pycoll.nn.Linear(3, 2)
    net2.set_state_dict(pycoll.load(DATA / "paddle_adam_step.pdparams"))
    np.testing.assert_allclose(net2.weight.numpy(), net.weight.numpy(), rtol=0, atol=1e-6)


def test_what_checkpoints_hold_comes_back():
    obj = {
        "args": argparse.Namespace(lr=0.01, layers=[1, 2], sub=argparse.Namespace(seed=3)),
        "seen": {"a", "b"}, "z": 3 - 1j, (0, "head"): [1.5], "dtype": np.dtype("int8"),
        "scalars": [np.float32(0.5), np.int64(-4), np.bool_(True), np.float16(2.0), np.complex64(1j)],
        "ordered": collections.OrderedDict([("z", 1), ("a", 2)]),
        "t": pycoll.to_tensor([1.0, 2.0]),  # unnamed: written as paddle's generated_tensor_N
    }
    buffer = io.BytesIO()
    pycoll.save(obj, buffer)
    buffer.seek(0)
    got = pycoll.load(buffer)
    assert got["args"] == obj["args"] and type(got["args"].sub) is argparse.Namespace
    assert got["seen"] == {"a", "b"} and got["z"] == 3 - 1j and got[(0, "head")] == [1.5]
    assert got["dtype"] == np.dtype("int8")
    for back, sent in zip(got["scalars"], obj["scalars"]):
        assert type(back) is type(sent) and back == sent
    assert type(got["ordered"]) is collections.OrderedDict and list(got["ordered"]) == ["z", "a"]
    assert got["t"].name == "generated_tensor_0" and got["t"].numpy().tolist() == [1.0, 2.0]
    assert plain_unpickle(buffer.getvalue())["t"][0] == "generated_tensor_0"


def test_bfloat16_and_float8_tensors_are_written_as_their_bit_patterns():
    """paddle 3.3.1 wrote to_tensor([1.0, 2.5]) cast to float8_e4m3fn as int8 [56, 66] and
    float8_e5m2 as [60, 65], and paddle.load gave int8 tensors back. A raw array of those dtypes
    (what pycoll's .numpy() gives) is written as its bit patterns too: paddle's .numpy() gives
    those, and paddle.load could not read the ml_dtypes type (a probe)."""
    e4m3 = pycoll.to_tensor([1.0, 2.5]).astype("float8_e4m3fn")
    e5m2 = pycoll.to_tensor([1.0, 2.5]).astype("float8_e5m2")
    buffer = io.BytesIO()
    pycoll.save({"a": e4m3, "b": e5m2, "raw": e4m3.numpy()}, buffer)
    written = plain_unpickle(buffer.getvalue())
    assert written["a"][1].dtype == np.int8 and written["a"][1].tolist() == [56, 66]
    assert written["b"][1].tolist() == [60, 65]
    buffer.seek(0)
    back = pycoll.load(buffer)
    assert back["a"].dtype == np.int8 and back["a"].numpy().tolist() == [56, 66]
    assert written["raw"].dtype == np.int8 and written["raw"].tolist() == [56, 66]
    assert back["raw"].dtype == np.int8 and back["raw"].view("float8_e4m3fn").astype(np.float32).tolist() == [1.0, 2.5]


def test_big_arrays_are_sliced_as_paddle_slices_them_for_protocols_2_and_3(tmp_path):
    """paddle cuts an array of protocol 2 or 3 into flat slices of at most 2**30 - 1 bytes; here
    the bound is 16 bytes, so a 2x5 float32 array (40 bytes) becomes 4 + 4 + 2 values."""
    weight = named(pycoll.to_tensor(np.arange(10, dtype=np.float32).reshape(2, 5)), "linear_9.w_0")
    bias = named(pycoll.to_tensor([1.0, 2.0]), "linear_9.b_0")
    saved = saved_state_dict({"weight": weight, "bias": bias}, protocol=2, max_slice_bytes=16)
    assert list(saved) == ["bias", NAME_TABLE, "weight@@.0", "weight@@.1", "weight@@.2", SLICED]
    assert saved[SLICED] == {"weight": {"OriginShape": (2, 5), "slices": ["weight@@.0", "weight@@.1", "weight@@.2"]}}
    assert [saved[f"weight@@.{i}"].tolist() for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(saved_state_dict({"weight": weight}, protocol=4, max_slice_bytes=16)) == ["weight", NAME_TABLE]
    path = tmp_path / "sliced.pdparams"
    path.write_bytes(pickle.dumps(saved, protocol=2))
    back = pycoll.load(path)
    assert list(back) == ["bias", "weight"] and back["weight"].name == "linear_9.w_0"
    np.testing.assert_array_equal(back["weight"].numpy(), weight.numpy())


def test_protocols_2_to_4_round_trip_and_others_are_refused(tmp_path):
    state = {"w": named(pycoll.to_tensor([[1.0, 2.0]]), "w")}
    for protocol in (2, 3, 4):
        pycoll.save(state, tmp_path / "s", protocol=protocol)
        assert (tmp_path / "s").read_bytes()[:2] == bytes([0x80, protocol])
        assert pycoll.load(tmp_path / "s")["w"].numpy().tolist() == [[1.0, 2.0]]
    for protocol in (1, 5):
        with pytest.raises(ValueError, match="protocol must be 2, 3 or 4"):
            pycoll.save(state, tmp_path / "s", protocol=protocol)


class Holder:
    pass


@pytest.mark.parametrize("make, kind", [
    (lambda: pycoll.nn.Linear(2, 2), r"Linear at obj\['x'\]\[0\] \(save its state_dict\(\) instead\)"),
    (lambda: len, "builtin_function_or_method"),
    (lambda: (i for i in range(2)), "generator"),
    (Holder, "Holder"),
    (lambda: np.array([{"a": 1}], dtype=object), "dtype object"),
    (lambda: collections.defaultdict(list), "defaultdict"),
    (lambda: b"raw", "bytes .* paddle.save refuses it outside a state dict"),
], ids=["Layer", "function", "generator", "object", "object array", "defaultdict", "bytes"])
def test_save_refuses_what_load_would_not_build(tmp_path, make, kind):
    with pytest.raises(TypeError, match=kind):
        pycoll.save({"x": [make()], "n": 1}, tmp_path / "f")
    assert not list(tmp_path.iterdir())


def test_bytes_are_saved_where_paddle_saves_them(tmp_path):
    """paddle.save keeps bytes in a state dict's values, and refuses them elsewhere (its load
    walks the rest of a tree and stops at bytes)."""
    state = {"w": pycoll.ones([2]), "meta": {"blob": b"\x00\xff", "ids": frozenset([1])}}
    pycoll.save(state, tmp_path / "f")
    assert pycoll.load(tmp_path / "f")["meta"] == {"blob": b"\x00\xff", "ids": frozenset([1])}
    pycoll.save({"args": argparse.Namespace(blob=b"x"), "n": 1}, tmp_path / "g")  # paddle does not look inside
    assert pycoll.load(tmp_path / "g")["args"].blob == b"x"


def calling(module, name, *args, protocol=2):
    """A pickle that calls module.name(*args) as it loads."""
    body = pickle.dumps(args, protocol)[2:-1]
    return bytes([0x80, protocol]) + b"c" + f"{module}\n{name}\n".encode() + body + b"R."


@pytest.mark.parametrize("module, name, args", [
    ("os", "system", ("touch pycoll_ran_code",)),
    ("builtins", "eval", ("open('pycoll_ran_code', 'w')",)),
    ("subprocess", "Popen", (["touch", "pycoll_ran_code"],)),
    ("builtins", "getattr", (1, "real")),
    ("numpy", "load", ("pycoll_ran_code",)),
])
def test_a_file_naming_a_harmful_callable_is_refused(tmp_path, monkeypatch, module, name, args):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pdparams"
    path.write_bytes(calling(module, name, *args))
    with pytest.raises(ValueError, match=rf"evil.pdparams.*names {module}\.{name}"):
        pycoll.load(path)
    assert not (tmp_path / "pycoll_ran_code").exists()


def test_allowed_callables_cannot_be_turned_against_the_loader(tmp_path):
    path = tmp_path / "evil.pd"
    path.write_bytes(calling("_codecs", "encode", "x", "zlib_codec"))  # another codec
    with pytest.raises(ValueError, match="allows 'latin1' only"):
        pycoll.load(path)
    # BUILD with a slot state on the class itself: would set argparse.Namespace.__init__ = tuple
    rebind = (b"\x80\x02cargparse\nNamespace\nN}X\x08\x00\x00\x00__init__c__builtin__\ntuple\ns\x86b.")
    path.write_bytes(rebind)
    init = argparse.Namespace.__init__
    with pytest.raises(ValueError, match="sets the state of a type"):
        pycoll.load(path)
    assert argparse.Namespace.__init__ is init
    # a Namespace given attributes through setattr (a slot state) rather than its __dict__
    path.write_bytes(b"\x80\x02cargparse\nNamespace\n)\x81N}X\x01\x00\x00\x00aK\x01s\x86b.")
    with pytest.raises(ValueError, match="not a dict of names"):
        pycoll.load(path)
    path.write_bytes(b"\x80\x02cargparse\nNamespace\n)\x81}X\x01\x00\x00\x00aK\x01sb.")
    assert pycoll.load(path) == argparse.Namespace(a=1)


def test_a_length_beyond_the_end_of_the_file_is_refused_before_it_is_allocated(tmp_path):
    path = tmp_path / "liar.pd"
    path.write_bytes(b"\x80\x04\x8e" + struct.pack("<Q", 1 << 40) + b"abc.")  # BINBYTES8 of 1 TiB
    with pytest.raises(ValueError, match=r"liar.pd.*claims 1099511627776 bytes where 4 are left"):
        pycoll.load(path)
