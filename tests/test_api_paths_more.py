"""paddle 3.3.1's module paths and top-level names that pycoll now has: paddle.incubate.optimizer,
the deprecated paddle.incubate.graph_send_recv, paddle.utils.unique_name and the top-level in-place
functions (pycoll.cumsum_(x), ...), against numbers measured on paddle's CPU build."""
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.incubate.optimizer as incubate_optimizer
from pycoll.utils import unique_name

EXPECTED = {  # paddle 3.3.1: paddle.<name>(x, ...) as in the test, x's values afterwards
    'bitwise_and_': [[1, 5, 4], [2, 2, 4]],
    'bitwise_or_': [[7, -3, -2], [7, 3, -9]],
    'bitwise_xor_': [[6, -8, -6], [5, 1, -13]],
    'bitwise_not_': [[-6, 2, -7], [-8, -3, 8]],
    'cumsum_': [[1.5, 3.5, 6.5], [-4.0, -3.5, 2.5]],
    'floor_divide_': [[1, -1, -2], [3, 0, -3]],
    'floor_mod_': [[2, 2, -2], [1, 2, 3]],
    'mod_': [[2, 2, -2], [1, 2, 3]],
    'remainder_': [[2, 2, -2], [1, 2, 3]],
    'log_': [[0.405465, 0.693147, 1.098612], [1.386294, -0.693147, 1.791759]],
    'pow_': [[2.25, 4.0, 9.0], [16.0, 0.25, 36.0]],
    'masked_fill_': [[-1.0, -1.0, -1.0], [-4.0, 0.5, -1.0]],
    'tril_': [[1.5, 0.0, 0.0], [-4.0, 0.5, 0.0]],
    'triu_': [[0.0, 2.0, 3.0], [0.0, 0.0, 6.0]],
}


def _ints():
    return pycoll.to_tensor([[5, -3, 6], [7, 2, -9]], dtype="int32")


def _floats():
    return pycoll.to_tensor([[1.5, 2.0, 3.0], [-4.0, 0.5, 6.0]], dtype="float32")


_B = [[3, 5, -4], [2, 3, 4]]
_CALLS = {
    "bitwise_and_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "bitwise_or_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "bitwise_xor_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "bitwise_not_": lambda: (_ints(), (), {}),
    "cumsum_": lambda: (_floats(), (), {"axis": 1}),
    "floor_divide_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "floor_mod_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "mod_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "remainder_": lambda: (_ints(), (pycoll.to_tensor(_B, dtype="int32"),), {}),
    "log_": lambda: (pycoll.abs(_floats()), (), {}),
    "pow_": lambda: (_floats(), (2,), {}),
    "masked_fill_": lambda: (_floats(), (_floats() > 1.0, -1.0), {}),
    "tril_": lambda: (_floats(), (0,), {}),
    "triu_": lambda: (_floats(), (), {"diagonal": 1}),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_top_level_inplace_functions_equal_paddle(name):
    x, args, kwargs = _CALLS[name]()
    out = getattr(pycoll, name)(x, *args, **kwargs)
    assert out is x  # in place, returning x, as paddle's
    np.testing.assert_allclose(x.numpy(), EXPECTED[name], rtol=1e-6, atol=1e-6)
    assert getattr(pycoll, name) is getattr(pycoll.Tensor, name)  # the method, not a copy


def test_top_level_normal_():
    pycoll.seed(4)
    x = pycoll.zeros([20000])
    assert pycoll.normal_(x, mean=3.0, std=2.0) is x
    assert abs(float(x.mean()) - 3.0) < 0.1 and abs(float(x.std()) - 2.0) < 0.1  # ~5 sigma


def test_incubate_optimizer_reexports():
    assert incubate_optimizer.LookAhead is pycoll.incubate.LookAhead
    assert incubate_optimizer.ModelAverage is pycoll.incubate.ModelAverage
    assert pycoll.incubate.optimizer is incubate_optimizer


def test_graph_send_recv_equals_paddle_and_warns():
    x = pycoll.to_tensor([[0, 2, 3], [1, 4, 5], [2, 6, 7]], dtype="float32")
    src = pycoll.to_tensor([0, 1, 2, 0], dtype="int32")
    dst = pycoll.to_tensor([1, 2, 1, 0], dtype="int32")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pycoll.incubate.graph_send_recv(x, src, dst, pool_type="sum")
    assert any("pycoll.geometric.send_u_recv" in str(w.message) for w in caught)  # deprecated since 2.4, as paddle's
    # paddle 3.3.1: paddle.incubate.graph_send_recv(x, src, dst, pool_type="sum") / ("max", out_size=4)
    assert out.numpy().tolist() == [[0.0, 2.0, 3.0], [2.0, 8.0, 10.0], [1.0, 4.0, 5.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert pycoll.incubate.graph_send_recv(x, src, dst, "max", out_size=4).numpy().tolist() == [
            [0.0, 2.0, 3.0], [2.0, 6.0, 7.0], [1.0, 4.0, 5.0], [0.0, 0.0, 0.0]]
        with pytest.raises(ValueError, match="pool_type must be 'sum', 'mean', 'max' or 'min', got 'prod'"):
            pycoll.incubate.graph_send_recv(x, src, dst, pool_type="prod")


def test_unique_name_shares_layer_counters_like_paddle():
    # the sequence paddle 3.3.1 prints for the same calls (each in a fresh namespace here)
    with unique_name.guard():
        names = [unique_name.generate("fc"), unique_name.generate("fc"), unique_name.generate("linear")]
        layer = pycoll.nn.Linear(2, 2)
        names += [layer.full_name(), layer.weight.name, unique_name.generate("linear")]
        with unique_name.guard():
            inner = pycoll.nn.Linear(2, 2)
            names += [unique_name.generate("fc"), inner.full_name()]
        with unique_name.guard("A"):
            names.append(unique_name.generate("fc"))
        with unique_name.guard(b"B"):
            names.append(unique_name.generate("fc"))
        names.append(unique_name.generate("fc"))
        old = unique_name.switch()
        names.append(unique_name.generate("fc"))
        unique_name.switch(*old)
        names.append(unique_name.generate("fc"))
    assert names == ["fc_0", "fc_1", "linear_0", "linear_1", "linear_1.w_0", "linear_2", "fc_0", "linear_0",
                     "Afc_0", "Bfc_0", "fc_2", "fc_0", "fc_3"]
    assert unique_name.generate_with_ignorable_key("x").startswith("dygraph_tmp_")


def test_unique_name_guard_restores_outer_numbering_and_errors():
    before = pycoll.nn.Linear(1, 1).full_name()
    with unique_name.guard():
        assert pycoll.nn.Linear(1, 1).full_name() == "linear_0"
    after = pycoll.nn.Linear(1, 1).full_name()
    assert int(after.rsplit("_", 1)[1]) == int(before.rsplit("_", 1)[1]) + 1  # the outer counter resumes
    with pytest.raises(TypeError, match="key must be a str, got int"):
        unique_name.generate(5)
    with pytest.raises(TypeError, match="new_generator must be a str, bytes, UniqueNameGenerator or None, got int"):
        with unique_name.guard(3):
            pass
