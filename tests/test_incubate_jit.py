"""paddle.incubate.jit.inference: eager and without gradients (pycoll has no static program)."""
import numpy as np
import pytest

import pycoll


class Doubled(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fn = pycoll.nn.Linear(4, 4)

    def forward(self, x):
        return self.fn(x + x)


def test_a_layer_keeps_its_values_and_computes_without_gradients():
    model, x = Doubled(), pycoll.rand([2, 4])
    trained = model(x)
    assert pycoll.incubate.jit.inference(model) is model and pycoll.incubate.jit.is_inference_mode(model)
    inferred = model(x)
    assert np.array_equal(inferred.numpy(), trained.numpy()) and inferred.stop_gradient and not trained.stop_gradient
    assert pycoll.incubate.jit.inference(model) is model  # a second call leaves it as it is (paddle's)


def test_a_function_decorated_with_paddles_options():
    @pycoll.incubate.jit.inference(precision_mode="float16", with_trt=True)
    def twice(x):
        return x * 2

    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    out = twice(x)
    assert out.numpy().tolist() == [2.0, 4.0] and out.stop_gradient and twice.__name__ == "twice"
    assert pycoll.incubate.jit.is_inference_mode(twice) and not pycoll.incubate.jit.is_inference_mode(len)
    with pytest.raises(TypeError, match="inference: function must be a Layer or a function, got int"):
        pycoll.incubate.jit.inference(3)
