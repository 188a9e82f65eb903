"""An op given Tensors on the CPU and on the GPU computes on the GPU, as paddle's does.

paddle runs a kernel on its inputs' highest-priority place and copies an input from elsewhere
there: a CPU tensor beside a GPU one, a model built before ``set_device('gpu')`` called on GPU
input. The copy is an op, so the CPU tensor still gets its gradient, on the CPU. Here the GPU is
tests/strict_cupy.py's stand-in, which refuses host arrays as CuPy does (found by a probe:
TypeError in add, matmul, concat... before)."""
import numpy as np
import pytest

import pycoll
import strict_cupy


@pytest.fixture
def gpu():
    with strict_cupy.installed() as cp:
        yield cp
    pycoll.set_device("cpu")


def _cpu(values, stop_gradient=True):
    pycoll.set_device("cpu")
    t = pycoll.to_tensor(np.asarray(values, dtype="float32"), stop_gradient=stop_gradient)
    pycoll.set_device("gpu")
    return t


OPS = {
    "add": lambda g, c: g + c,
    "radd": lambda g, c: c + g,
    "subtract": lambda g, c: pycoll.subtract(c, g),
    "maximum": lambda g, c: pycoll.maximum(g, c),
    "matmul": lambda g, c: pycoll.matmul(g.reshape([1, 2]), c.reshape([2, 1])).reshape([1]),
    "concat": lambda g, c: pycoll.concat([g, c]),
    "stack": lambda g, c: pycoll.stack([c, g]),
    "where": lambda g, c: pycoll.where(g > 2.5, g, c),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_cpu_tensor_beside_a_gpu_one_is_moved_and_gets_its_gradient_on_the_cpu(op, gpu):
    c = _cpu([1.0, 4.0], stop_gradient=False)
    g = pycoll.to_tensor(np.array([2.0, 3.0], dtype="float32"), stop_gradient=False)
    out = OPS[op](g, c)
    assert isinstance(out._array, gpu.ndarray)
    out.sum().backward()
    assert isinstance(c.grad._array, np.ndarray)  # the CPU tensor's gradient stays on the CPU
    assert isinstance(g.grad._array, gpu.ndarray)

    pycoll.set_device("cpu")  # the same on the CPU alone
    c2 = pycoll.to_tensor(np.array([1.0, 4.0], dtype="float32"), stop_gradient=False)
    g2 = pycoll.to_tensor(np.array([2.0, 3.0], dtype="float32"), stop_gradient=False)
    want = OPS[op](g2, c2)
    want.sum().backward()
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    np.testing.assert_array_equal(c.grad.numpy(), c2.grad.numpy())
    np.testing.assert_array_equal(g.grad.numpy(), g2.grad.numpy())


def test_a_model_built_on_the_cpu_runs_on_gpu_input_and_trains_on_the_cpu(gpu):
    pycoll.set_device("cpu")
    pycoll.seed(1)
    model = pycoll.nn.Linear(3, 2)
    before = model.weight.numpy().copy()
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    pycoll.set_device("gpu")
    x = pycoll.to_tensor(np.ones((4, 3), dtype="float32"))
    loss = model(x).mean()
    assert isinstance(loss._array, gpu.ndarray)
    loss.backward()
    opt.step()
    assert isinstance(model.weight._array, np.ndarray)
    np.testing.assert_allclose(model.weight.numpy(), before - 0.1 * np.full((3, 2), 0.5, dtype="float32"), rtol=1e-6)
