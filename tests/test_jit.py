"""pycoll.jit: code decorated for paddle's dynamic-to-static conversion runs (eagerly), the
export calls refuse with what to do instead, and InputSpec's constructors (paddle 3.3.1's)."""
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


def test_export_refuses_before_writing_and_says_what_to_do(tmp_path):
    with pytest.raises(NotImplementedError, match=r"pycoll.save\(layer.state_dict\(\)"):
        pycoll.jit.save(Net(), str(tmp_path / "net"), input_spec=[InputSpec([None, 4])])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(NotImplementedError, match="no static program"):
        pycoll.jit.load(str(tmp_path / "net"))


def test_input_spec_constructors():
    t = pycoll.ones([2, 3], dtype="float64")
    assert InputSpec.from_tensor(t, name="a") == InputSpec([2, 3], "float64", "a")
    assert InputSpec.from_numpy(np.ones((2, 3), "int32")) == InputSpec([2, 3], "int32")
    spec = InputSpec([None, 3]).batch(4)
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
