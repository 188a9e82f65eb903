"""pycoll.jit: code decorated for paddle's dynamic-to-static conversion runs (eagerly), jit.save
and jit.load keep a Layer for inference and fine-tuning (another process loading it too), and
InputSpec's constructors (paddle 3.3.1's)."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from pycoll.static import InputSpec


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    @pycoll.jit.to_static(input_spec=[InputSpec([None, 4], "float32", "x")], full_graph=True)
    def forward(self, x):
        return self.fc(x)


def test_decorated_code_computes_what_it_computes_undecorated():
    net = Net()
    x = pycoll.rand([3, 4])
    np.testing.assert_array_equal(net(x).numpy(), (x.numpy() @ net.fc.weight.numpy()) + net.fc.bias.numpy())
    net(x).sum().backward()
    assert net.fc.weight.grad is not None

    @pycoll.jit.to_static
    def double(t):
        return t * 2

    np.testing.assert_array_equal(double(pycoll.ones([2])).numpy(), [2.0, 2.0])
    layer = nn.Linear(2, 2)
    assert pycoll.jit.to_static(layer) is layer
    assert pycoll.jit.not_to_static(double) is double


@pytest.mark.parametrize("call, match", [
    (lambda: pycoll.jit.to_static(input_spec="x"), "input_spec must be a list or tuple of InputSpec, got str"),
    (lambda: pycoll.jit.to_static(input_spec=[object()]), r"input_spec\[0\] must be an InputSpec"),
    (lambda: pycoll.jit.to_static(full_graph="yes"), "full_graph must be a bool"),
    (lambda: pycoll.jit.to_static(fullgraph=True), "unexpected keyword arguments"),
    (lambda: pycoll.jit.enable_to_static(1), "enable_to_static_bool must be a bool"),
])
def test_bad_arguments_name_themselves(call, match):
    with pytest.raises(TypeError, match=match):
        call()


class Classifier(nn.Layer):
    """Batch norm and dropout (eval mode matters), a buffer, and a weight used twice (tied)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1D(4)
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(4, 3, weight_attr=pycoll.ParamAttr(learning_rate=0.5))
        self.tied = self.fc  # the same sublayer under a second name

    def forward(self, x):
        return self.head(self.drop(self.bn(self.tied(self.fc(x)))))


def test_a_saved_layer_loads_for_inference_and_fine_tuning(tmp_path):
    pycoll.seed(3)
    net, x = Classifier(), pycoll.rand([6, 4])
    net.train()
    net(x)  # moves the running statistics
    net.eval()
    expected = net(x).numpy()
    pycoll.jit.save(net, str(tmp_path / "inference" / "model"), input_spec=[InputSpec([None, 4], "float32", "x")])
    assert sorted(p.name for p in (tmp_path / "inference").iterdir()) == ["model.pdiparams", "model.pdmodel"]
    assert set(pycoll.load(str(tmp_path / "inference" / "model.pdiparams"))) == set(net.state_dict())

    loaded = pycoll.jit.load(str(tmp_path / "inference" / "model"))
    assert type(loaded) is Classifier and not loaded.training
    np.testing.assert_array_equal(loaded(x).numpy(), expected)
    assert list(loaded.state_dict()) == list(net.state_dict())
    assert loaded.tied is loaded.fc  # shared parts stay shared
    weight = loaded.head.weight
    assert isinstance(weight, nn.Parameter) and not weight.stop_gradient
    assert weight.optimize_attr == {"learning_rate": 0.5} and weight.name == net.head.weight.name
    assert float(loaded.bn._mean.abs().sum()) > 0  # the buffers came back too

    loaded.train()  # fine-tuning, as paddle's loaded layers are
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=loaded.parameters())
    loaded(x).sum().backward()
    opt.step()
    assert not np.array_equal(loaded.head.weight.numpy(), net.head.weight.numpy())
    np.testing.assert_array_equal(net(x).numpy(), expected)  # the saved layer is untouched


def test_a_layer_loads_in_another_process(tmp_path):
    net = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 2))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    pycoll.jit.save(net, str(tmp_path / "mlp"))
    expected = net(pycoll.to_tensor(x)).numpy()
    code = ("import sys, numpy as np, pycoll; layer = pycoll.jit.load(sys.argv[1]); "
            "np.save(sys.argv[2], layer(pycoll.to_tensor(np.arange(6, dtype='float32').reshape(2, 3))).numpy())")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "mlp"), str(tmp_path / "out.npy")], check=True,
                   timeout=120)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)


def test_a_script_s_own_classes_and_hooks_travel_with_the_layer(tmp_path):
    # the training script defines the Layer (and a helper, and a lambda hook); an inference script
    # that defines none of them loads and runs it, as paddle's inference program does
    code = ("import sys, numpy as np, pycoll\n"
            "def doubled(t):\n    return t * 2\n"
            "class Mine(pycoll.nn.Layer):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = pycoll.nn.Linear(2, 2)\n"
            "    def forward(self, x):\n        return doubled(self.fc(x))\n"
            "pycoll.seed(1)\nnet = Mine()\nnet.register_forward_post_hook(lambda layer, inputs, out: out + 1)\n"
            "pycoll.jit.save(net, sys.argv[1])\n"
            "np.save(sys.argv[1] + '.npy', net(pycoll.ones([1, 2])).numpy())\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "mine")], check=True, timeout=120)
    loaded = pycoll.jit.load(str(tmp_path / "mine"))
    assert type(loaded).__name__ == "Mine"
    np.testing.assert_array_equal(loaded(pycoll.ones([1, 2])).numpy(), np.load(tmp_path / "mine.npy"))


def test_a_saved_function_loads_in_another_process(tmp_path):
    # paddle's jit.save example saves a to_static function and calls what jit.load gives back
    code = ("import sys, pycoll\n"
            "@pycoll.jit.to_static(input_spec=[pycoll.static.InputSpec(shape=[None, 3], dtype='float32')])\n"
            "def fun(inputs):\n    return pycoll.tanh(inputs) * 2\n"
            "pycoll.jit.save(fun, sys.argv[1])\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "func" / "model")], check=True, timeout=120)
    loaded = pycoll.jit.load(str(tmp_path / "func" / "model"))
    x = pycoll.to_tensor([[0.5, -1.0, 2.0]])
    np.testing.assert_array_equal(loaded(x).numpy(), (pycoll.tanh(x) * 2).numpy())


def test_the_script_s_own_modules_travel_too(tmp_path):
    # models.py beside train.py, with a helper module of its own, loaded from elsewhere where
    # neither can be imported
    (tmp_path / "helpers.py").write_text("import pycoll\ndef widen(t):\n    return pycoll.concat([t, t], axis=-1)\n")
    (tmp_path / "models.py").write_text(
        "import pycoll, helpers\n"
        "class Net(pycoll.nn.Layer):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = pycoll.nn.Linear(2, 3)\n"
        "    def forward(self, x):\n        return helpers.widen(self.fc(x))\n")
    code = ("import sys, numpy as np, pycoll, models\npycoll.seed(2)\nnet = models.Net()\n"
            "pycoll.jit.save(pycoll.DataParallel(net), sys.argv[1])\n"  # a wrapper keeps its model
            "np.save(sys.argv[1] + '.npy', net(pycoll.ones([1, 2])).numpy())\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "out" / "net")], check=True, timeout=120,
                   cwd=str(tmp_path))
    loaded = pycoll.jit.load(str(tmp_path / "out" / "net"))
    assert type(loaded).__name__ == "Net" and "models" not in sys.modules and "helpers" not in sys.modules
    np.testing.assert_array_equal(loaded(pycoll.ones([1, 2])).numpy(), np.load(tmp_path / "out" / "net.npy"))


def test_a_class_the_loading_process_cannot_import_is_named(tmp_path):
    # an installed package's classes are kept by name (here: the user site-packages of a
    # PYTHONUSERBASE of the saving process's own); a process without the package is told so
    code = ("import site, sys; sys.path.insert(0, site.getusersitepackages())\n"
            "import gone_package, pycoll\npycoll.jit.save(gone_package.Kept(), sys.argv[1])\n")
    env = {**os.environ, "PYTHONUSERBASE": str(tmp_path / "userbase")}
    site_dir = subprocess.run([sys.executable, "-c", "import site; print(site.getusersitepackages())"], env=env,
                              capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    package = os.path.join(site_dir, "gone_package")
    os.makedirs(package)
    with open(os.path.join(package, "__init__.py"), "w") as f:
        f.write("import pycoll\nclass Kept(pycoll.nn.Layer):\n    pass\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "kept")], check=True, timeout=120, env=env)
    with pytest.raises(ImportError, match=r"holds a gone_package.Kept, which cannot be imported here"):
        pycoll.jit.load(str(tmp_path / "kept"))


def test_save_and_load_refuse_bad_arguments_before_writing(tmp_path):
    class Locked(nn.Layer):  # a lock cannot be pickled, by value or otherwise
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

    with pytest.raises(TypeError, match="layer must be a Layer or a function, got int"):
        pycoll.jit.save(3, str(tmp_path / "f"))
    with pytest.raises(ValueError, match="path='dir/'"):
        pycoll.jit.save(Classifier(), "dir/")
    with pytest.raises(TypeError, match=r"jit.save: input_spec\[0\] must be an InputSpec"):
        pycoll.jit.save(Classifier(), str(tmp_path / "c"), input_spec=[object()])
    with pytest.raises(ValueError, match=r"configs \['bogus'\] are not supported"):
        pycoll.jit.save(Classifier(), str(tmp_path / "c"), bogus=1)
    with pytest.raises(TypeError, match=r"the Layer cannot be kept: its attribute lock \(a _thread.lock\) cannot be "
                                        r"pickled: cannot pickle '_thread.lock'"):
        pycoll.jit.save(Locked(), str(tmp_path / "locked"))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="does not exist"):
        pycoll.jit.load(str(tmp_path / "nothing"))
    with pytest.raises(NotImplementedError, match="no static program"):
        pycoll.jit.TranslatedLayer()


def test_model_save_for_inference_keeps_the_network(tmp_path):
    net = Classifier()
    model = pycoll.Model(net, inputs=[InputSpec([None, 4], "float32", "x")])
    model.save(str(tmp_path / "infer"), training=False)
    loaded = pycoll.jit.load(str(tmp_path / "infer"))
    x = pycoll.rand([2, 4])
    net.eval()
    np.testing.assert_array_equal(loaded(x).numpy(), net(x).numpy())


def test_input_spec_constructors():
    t = pycoll.ones([2, 3], dtype="float64")
    assert InputSpec.from_tensor(t, name="a") == InputSpec([2, 3], "float64", "a")
    assert InputSpec.from_numpy(np.ones((2, 3), "int32")) == InputSpec([2, 3], "int32")
    spec = InputSpec([None, 3])
    assert spec.batch(4) is spec  # in place, as paddle's (code calls it without keeping the result)
    assert spec.shape == (4, -1, 3) and spec.unbatch() == InputSpec([None, 3]) == InputSpec([-1, 3])
    with pytest.raises(TypeError, match="tensor must be a pycoll Tensor, got ndarray"):
        InputSpec.from_tensor(np.ones(2))
    with pytest.raises(TypeError, match="batch_size must be an int"):
        InputSpec([3]).batch("4")


def test_an_input_spec_reads_as_paddles():
    # a probe: the shape kept None where paddle has -1 (code testing shape[0] == -1 was told no),
    # specs could not be hashed, and a bad shape or dtype went through
    spec = InputSpec([None, 3], "float32", "x")
    assert spec.shape == (-1, 3) and spec.dtype == pycoll.float32 and spec.stop_gradient is False
    assert len({spec, InputSpec((-1, 3), pycoll.float32, "x")}) == 1
    assert repr(spec) == "InputSpec(shape=(-1, 3), dtype=float32, name=x, stop_gradient=False)"
    assert InputSpec([3], "int64", stop_gradient=True).stop_gradient is True
    with pytest.raises(TypeError, match="shape must be a list or tuple"):
        InputSpec("abc")
    with pytest.raises(ValueError, match=r"shape\[0\] must be an int"):
        InputSpec([2.5])
    with pytest.raises(TypeError, match="floatx"):
        InputSpec([2], "floatx")
    assert InputSpec([-2, 4]).shape == (-1, 4)  # paddle's: any size below -1 is -1
    with pytest.raises(ValueError, match="a list of one int"):
        InputSpec([3]).batch([4, 5])


def test_import_pycoll_does_not_need_cloudpickle():
    # the GPU machine installs pycoll without its dependencies; jit.save alone needs cloudpickle
    code = "import sys, pycoll; print('cloudpickle' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


def test_paddles_program_files_are_named_as_such(tmp_path):
    """What paddle 3.3.1's jit.save writes (net.json + net.pdiparams): refused as paddle's program,
    not as a missing file."""
    (tmp_path / "net.json").write_text("{}")
    (tmp_path / "net.pdiparams").write_bytes(b"\0")
    with pytest.raises(ValueError, match=r"net.json is paddle's jit.save program \(PIR\), which pycoll cannot run"):
        pycoll.jit.load(str(tmp_path / "net"))
