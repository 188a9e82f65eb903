"""pycoll's random ops on the inputs a Paddle user also gives them: 0-d tensors, shapes as arrays
or tensors, p as a Tensor, lists for normal's mean and std, and the inputs paddle 3.3.1 refuses
(or wraps silently) refused with the op and argument named."""
import numpy as np
import pytest

import pycoll

F = pycoll.nn.functional


@pytest.mark.parametrize("draw", [
    lambda s: pycoll.bernoulli(s), lambda s: pycoll.poisson(s), lambda s: pycoll.standard_gamma(s),
    lambda s: pycoll.binomial(pycoll.to_tensor(10), s), lambda s: pycoll.normal(s, 1.0),
    lambda s: s.clone().normal_(), lambda s: s.clone().bernoulli_(0.5), lambda s: s.clone().log_normal_(),
    lambda s: s.clone().cauchy_(), lambda s: s.clone().geometric_(0.5), lambda s: F.dropout(s, 0.5),
    lambda s: F.alpha_dropout(s, 0.5), lambda s: pycoll.nn.Dropout(0.5)(s)])
def test_random_ops_draw_a_0d_result_from_a_0d_tensor(draw):
    out = draw(pycoll.to_tensor(0.5))
    assert out.shape == [] and isinstance(out.numpy(), np.ndarray) and np.isfinite(out.numpy())


def test_normal_draws_one_value_per_element_of_a_list_or_array_mean_or_std():
    pycoll.seed(0)
    for mean, std in (([0.0] * 1000, 1.0), (np.zeros(1000), 1.0), (0.0, [1.0] * 1000)):
        out = pycoll.normal(mean, std).numpy()
        assert out.shape == (1000,) and len(np.unique(out)) == 1000 and abs(out.std() - 1) < 0.1
    with pytest.raises(TypeError, match="normal: mean must be a floating-point or complex tensor, got int64"):
        pycoll.normal(pycoll.to_tensor([1, 2]), 0.3)  # paddle 3.3.1 has no int64 kernel either


def test_multinomial_without_replacement_in_draw_order_for_few_and_many_draws():
    pycoll.seed(5)
    weights = np.tile(np.arange(1.0, 51.0), (4000, 1))
    for draws in (5, 40):  # one pass per draw, and a partition
        picks = pycoll.multinomial(pycoll.to_tensor(weights), draws).numpy()
        assert picks.shape == (4000, draws) and all(len(set(row)) == draws for row in picks)
        first = np.bincount(picks[:, 0], minlength=50) / 4000
        np.testing.assert_allclose(first, weights[0] / weights[0].sum(), atol=0.012)
    everything = pycoll.multinomial(pycoll.to_tensor([0.0, 3.0, 1.0]), 2).numpy()
    assert sorted(everything.tolist()) == [1, 2]  # never the category of no weight


def test_shapes_given_as_arrays_or_tensors_and_uniform_of_one_value():
    assert pycoll.rand(np.array([2, 3])).shape == [2, 3]
    assert pycoll.randn(pycoll.to_tensor([2.0, 3.0])).shape == [2, 3]  # paddle takes whole floats
    assert pycoll.zeros(np.array([4], np.int32)).shape == [4]
    with pytest.raises(ValueError, match=r"shape must be .* got \[2.5, 3.0\]"):
        pycoll.rand(pycoll.to_tensor([2.5, 3.0]))
    assert pycoll.uniform([3], min=1.0, max=1.0).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="uniform: min must be <= max"):
        pycoll.uniform([3], min=2.0, max=1.0)


def test_dropout_takes_p_as_a_tensor_of_one():
    x = pycoll.ones([1000])
    pycoll.seed(1)
    by_number = F.dropout(x, 0.25).numpy()
    pycoll.seed(1)
    assert np.array_equal(F.dropout(x, pycoll.to_tensor(0.25)).numpy(), by_number)
    assert pycoll.nn.Dropout(pycoll.to_tensor([0.25])).p == 0.25
    with pytest.raises(TypeError, match="Dropout2D: p must be a number or a Tensor of one"):
        pycoll.nn.Dropout2D(pycoll.to_tensor([0.1, 0.2]))


@pytest.mark.parametrize("call,error,match", [
    (lambda: pycoll.randint(0, 2 ** 32, [3], "int32"), ValueError,
     r"randint: \[low, high\) = \[0, 4294967296\) holds values outside int32's range"),
    (lambda: pycoll.randint_like(pycoll.zeros([3], "int32"), -2 ** 40, 0), ValueError,
     r"randint_like: \[low, high\) = .* outside int32's range"),
    (lambda: pycoll.poisson(pycoll.to_tensor([-1.0, 2.0])), ValueError, r"poisson: x \(the rates\) must lie in \[0, "),
    (lambda: pycoll.poisson(pycoll.to_tensor([np.nan])), ValueError, r"poisson: x \(the rates\)"),
    (lambda: pycoll.poisson(pycoll.to_tensor([np.inf])), ValueError, r"poisson: x \(the rates\)"),
    (lambda: pycoll.bernoulli(pycoll.to_tensor([np.nan, 0.5])), ValueError,
     r"bernoulli: probabilities \(x\) must lie in \[0, 1\]"),
    (lambda: pycoll.randperm(5, "bool"), TypeError, "randperm: dtype must be an integer or floating-point dtype"),
    (lambda: pycoll.get_rng_state("nonsense"), ValueError, "place must be 'cpu', 'gpu' or 'gpu:N', got 'nonsense'"),
    (lambda: pycoll.seed(2 ** 64), ValueError, r"seed must be an int in \[0, 2\*\*64\)"),
])
def test_inputs_paddle_refuses_are_refused_naming_the_op_and_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_an_int64_range_and_float_randint_like_are_drawn():
    big = pycoll.randint(2 ** 40, 2 ** 40 + 5, [100]).numpy()
    assert big.dtype == np.int64 and big.min() >= 2 ** 40 and big.max() < 2 ** 40 + 5
    assert pycoll.randint_like(pycoll.zeros([3]), 0, 2 ** 40).dtype == pycoll.float32  # paddle's: x's dtype


def test_a_shape_tensor_of_more_than_one_dimension_is_refused():
    with pytest.raises(ValueError, match=r"or a 1-D Tensor of them, got a 2-D Tensor of shape \[2, 2\]"):
        pycoll.zeros(pycoll.to_tensor([[2, 3], [1, 1]]))  # paddle refuses it too


def test_multinomial_takes_num_samples_as_a_tensor_of_one_int():
    assert pycoll.multinomial(pycoll.to_tensor([1.0, 2.0, 3.0]), pycoll.to_tensor(2)).shape == [2]  # paddle's
