"""pycoll.inference: paddle's deployment API (Config, create_predictor, the Predictor's handles and
run([tensors])) over a Layer pycoll.jit.save kept; jit.save's input names and output_spec.

Names and return values as paddle 3.3.1's on the same program (its predictor names the inputs
after the InputSpecs, else the forward's arguments, and the outputs ``fetch_name_<i>``; ``run()``
returns None, ``run([tensors])`` the outputs)."""
import re
import subprocess
import sys

import numpy as np
import pytest

import pycoll
from pycoll import inference, nn
from pycoll.static import InputSpec


class TwoHeads(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, a, b):
        return self.fc(a) + b, a.sum(axis=1)


SPEC = [InputSpec([None, 4], "float32"), InputSpec([None, 3], "float32", name="bias")]


def _saved(tmp_path, **configs):
    pycoll.seed(3)
    net = TwoHeads()
    net.eval()
    pycoll.jit.save(net, str(tmp_path / "heads"), input_spec=SPEC, **configs)
    return net


def _inputs(batch):
    rng = np.random.default_rng(batch)
    return rng.random((batch, 4), dtype=np.float32), rng.random((batch, 3), dtype=np.float32)


def test_a_predictor_runs_the_saved_layer_through_its_handles(tmp_path):
    net = _saved(tmp_path)
    config = inference.Config(str(tmp_path / "heads.pdmodel"), str(tmp_path / "heads.pdiparams"))
    config.disable_gpu()
    config.switch_ir_optim(True)
    config.enable_memory_optim()
    config.set_cpu_math_library_num_threads(1)
    predictor = inference.create_predictor(config)
    assert predictor.get_input_names() == ["a", "bias"]  # the forward's argument, then the spec's name
    assert predictor.get_output_names() == ["fetch_name_0", "fetch_name_1"]  # known before a run
    for batch in (7, 1):
        a, b = _inputs(batch)
        handle = predictor.get_input_handle("a")
        handle.reshape([batch, 4])
        handle.copy_from_cpu(a)
        predictor.get_input_handle("bias").copy_from_cpu(b)
        assert predictor.run() is None
        want = net(pycoll.to_tensor(a), pycoll.to_tensor(b))
        for name, expected in zip(predictor.get_output_names(), want):
            out = predictor.get_output_handle(name)
            np.testing.assert_array_equal(out.copy_to_cpu(), expected.numpy())
            assert out.shape() == list(expected.shape) and out.type() == inference.DataType.FLOAT32


def test_run_with_tensors_returns_the_outputs_and_a_clone_shares_the_model(tmp_path):
    net = _saved(tmp_path)
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "heads")))  # the prefix
    a, b = _inputs(2)
    outputs = predictor.run([pycoll.to_tensor(a), b])  # a Tensor or an array each
    want = net(pycoll.to_tensor(a), pycoll.to_tensor(b))
    assert isinstance(outputs, list) and len(outputs) == 2
    for got, expected in zip(outputs, want):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    twin = predictor.clone()
    assert twin._layer is predictor._layer and twin.get_input_handle("a") is not predictor.get_input_handle("a")
    pool = inference.PredictorPool(inference.Config(str(tmp_path)), 2)  # a directory of one model
    np.testing.assert_array_equal(pool.retrive(1).run([a, b])[0].numpy(), want[0].numpy())


def test_output_spec_keeps_the_outputs_it_names(tmp_path):
    net = _saved(tmp_path, output_spec=[1])
    a, b = _inputs(3)
    loaded = pycoll.jit.load(str(tmp_path / "heads"))
    kept = loaded(pycoll.to_tensor(a), pycoll.to_tensor(b))
    assert isinstance(kept, pycoll.Tensor)  # one output alone, as paddle's pruned model returns it
    np.testing.assert_array_equal(kept.numpy(), net(pycoll.to_tensor(a), pycoll.to_tensor(b))[1].numpy())
    assert loaded._output_spec == [1] and loaded._input_spec == SPEC
    pycoll.jit.save(loaded, str(tmp_path / "again"))  # saved again: pruned once, not twice
    again = pycoll.jit.load(str(tmp_path / "again"))
    np.testing.assert_array_equal(again(pycoll.to_tensor(a), pycoll.to_tensor(b)).numpy(), kept.numpy())
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "heads")))
    assert predictor.get_output_names() == ["fetch_name_0"]
    with pytest.raises(TypeError, match="output_spec must be a list of the positions"):
        pycoll.jit.save(net, str(tmp_path / "bad"), output_spec=[pycoll.ones([1])])


def test_a_predictor_in_another_process(tmp_path):
    net = nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm2D(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5))
    net.eval()
    pycoll.jit.save(net, str(tmp_path / "cnn"), input_spec=[InputSpec([None, 3, 6, 6], "float32", name="img")])
    x = np.random.default_rng(0).random((5, 3, 6, 6), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    code = ("import sys, numpy as np, pycoll; p = pycoll.inference.create_predictor(pycoll.inference.Config("
            "sys.argv[1] + '.pdmodel', sys.argv[1] + '.pdiparams')); d = sys.argv[2]; "
            "p.get_input_handle(p.get_input_names()[0]).copy_from_cpu(np.load(d + '/x.npy')); p.run(); "
            "np.save(d + '/out.npy', p.get_output_handle(p.get_output_names()[0]).copy_to_cpu())")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "cnn"), str(tmp_path)], check=True, timeout=120)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), net(pycoll.to_tensor(x)).numpy())


def test_mistakes_are_named(tmp_path):
    _saved(tmp_path)
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "heads")))
    with pytest.raises(ValueError, match=r"no input 'x'; the model's are \['a', 'bias'\]"):
        predictor.get_input_handle("x")
    with pytest.raises(RuntimeError, match=r"inputs \['a', 'bias'\] hold no data"):
        predictor.run()
    handle = predictor.get_input_handle("a")
    with pytest.raises(TypeError, match="data must be a numpy.ndarray"):
        handle.copy_from_cpu([[1.0] * 4])
    handle.reshape([2, 4])
    assert handle.shape() == [2, 4]
    with pytest.raises(ValueError, match="shape must be a list of ints >= 0"):
        handle.reshape([-1, 4])
    with pytest.raises(ValueError, match="inputs must be a list of 2 tensors"):
        predictor.run([np.ones((2, 4), np.float32)])
    predictor.run(list(_inputs(2)))
    with pytest.raises(RuntimeError, match="'fetch_name_0' is an output; only inputs take data"):
        predictor.get_output_handle("fetch_name_0").copy_from_cpu(np.ones(3))
    with pytest.raises(NotImplementedError, match="TensorRT is not part of pycoll"):
        inference.Config(str(tmp_path / "heads")).enable_tensorrt_engine()
    (tmp_path / "paddles.json").write_text("{}")
    with pytest.raises(ValueError, match="paddle's inference program"):
        inference.Config(str(tmp_path / "paddles.json"))
    for missing in ("missing", "nope.json"):  # (a missing .json is missing, not paddle's)
        with pytest.raises(ValueError, match=f"create_predictor: .*{missing.split('.')[0]}.* does not exist"):
            inference.create_predictor(inference.Config(str(tmp_path / missing)))
    with pytest.raises(TypeError, match="config must be a paddle.inference.Config"):
        inference.create_predictor(str(tmp_path / "heads"))


def test_without_a_spec_the_outputs_are_named_at_the_first_run_and_a_missing_gpu_warns(tmp_path):
    net = nn.Linear(2, 2)
    pycoll.jit.save(net, str(tmp_path / "plain"))
    config = inference.Config(str(tmp_path / "plain"))
    config.enable_use_gpu(100, 0)
    if pycoll.device.device_count() == 0:
        with pytest.warns(UserWarning, match="no CUDA GPU 0 here; the predictor runs on the CPU"):
            predictor = inference.create_predictor(config)
    else:
        predictor = inference.create_predictor(config)
    assert predictor.get_input_names() == ["x"]  # Linear.forward(x)
    with pytest.raises(RuntimeError, match="saved without a complete input_spec.*call run\\(\\) first"):
        predictor.get_output_names()
    predictor.run([np.ones((1, 2), np.float32)])
    assert predictor.get_output_names() == ["fetch_name_0"]
    assert re.search(r"use_gpu +true", config.summary()) and re.search(r"gpu_device_id +0", config.summary())
    assert inference.get_num_bytes_of_data_type(inference.DataType.BFLOAT16) == 2
