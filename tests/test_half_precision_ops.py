"""16-bit floats as paddle treats them (p61): bfloat16 is a floating dtype everywhere, ops that sum
many terms (softmax, cross-entropy, attention, normalize, convolutions) accumulate in float32 and
give the input's dtype back, and the Adam family keeps a 16-bit parameter's moments in float32.
paddle's CPU build has no kernel for most of these: the expected values are float32's, rounded."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

HALVES = ["float16", "bfloat16"]


@pytest.mark.parametrize("dtype", HALVES)
def test_softmax_family_over_a_long_axis_sums_in_float32(dtype):
    logits = pycoll.to_tensor(np.random.RandomState(0).randn(2, 32000).astype("float32"))
    label = pycoll.to_tensor([5, 7])
    half = logits.astype(dtype)
    probs = F.softmax(half, -1)
    assert probs.dtype == half.dtype
    np.testing.assert_allclose(probs.astype("float32").sum(-1).numpy(), [1.0, 1.0], atol=2e-3)  # 8.1 and 8.9 before
    for op in (lambda t: F.log_softmax(t, -1)[0, :4], lambda t: F.cross_entropy(t, label)):
        np.testing.assert_allclose(op(half).astype("float32").numpy(), op(logits).numpy(), rtol=1e-2)
    v = logits[0] * 2 + 3
    np.testing.assert_allclose(F.normalize(v.astype(dtype), axis=0)[:4].astype("float32").numpy(),
                               F.normalize(v, axis=0)[:4].numpy(), rtol=2e-2)


@pytest.mark.parametrize("dtype", HALVES)
def test_convolutions_keep_a_16_bit_dtype(dtype):
    x = pycoll.to_tensor(np.random.RandomState(1).randn(1, 2, 6, 6).astype("float32"))
    conv = nn.Conv2D(2, 3, 3)
    reference = conv(x).numpy()
    conv.to(dtype=dtype)
    out = conv(x.astype(dtype))
    assert str(out.dtype) == dtype  # float32 before: the next 16-bit layer refused it
    np.testing.assert_allclose(out.astype("float32").numpy(), reference, rtol=5e-2, atol=5e-2)


def test_bfloat16_counts_as_floating():
    x = pycoll.to_tensor([1.25, float("nan"), float("inf"), -float("inf"), -0.0, -2.75]).astype("bfloat16")
    assert pycoll.isposinf(x).numpy().tolist() == [False, False, True, False, False, False]
    assert pycoll.isneginf(x).numpy().tolist() == [False, False, False, True, False, False]
    assert pycoll.signbit(x).numpy().tolist() == [False, False, False, True, True, True]
    assert pycoll.frac(x[[0, 5]]).astype("float32").numpy().tolist() == [0.25, -0.75]
    pooled = F.max_pool2d(pycoll.ones([1, 1, 4, 4]).astype("bfloat16"), 2)
    assert str(pooled.dtype) == "bfloat16" and pooled.astype("float32").numpy().tolist() == [[[[1.0, 1.0], [1.0, 1.0]]]]
    assert str(pycoll.atan2(x, x).dtype) == "bfloat16"


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "Lamb"])
def test_the_adam_family_keeps_a_16_bit_parameter_s_moments_in_float32(name):
    start = np.array([0.5, -0.25, 1.0, 2.0], "float32")
    p = pycoll.create_parameter([4], "float16", default_initializer=nn.initializer.Assign(start))
    optimizer = getattr(pycoll.optimizer, name)(learning_rate=0.1, parameters=[p])
    for _ in range(3):
        (p.astype("float32") * pycoll.to_tensor([1e-3, -2e-4, 5e-6, 0.0])).sum().backward()
        optimizer.step()
        optimizer.clear_grad()
    moments = {k: v for k, v in optimizer.state_dict().items() if "pow" not in k and hasattr(v, "dtype")}
    assert moments and all(str(v.dtype) == "float32" for v in moments.values())  # paddle's, fp16 before
    assert np.all(np.isfinite(p.numpy().astype("float32")))  # fp16 moments underflowed: inf and NaN
    if name == "Adam":  # against float32 Adam on the same gradients
        np.testing.assert_allclose(p.numpy().astype("float32"), [0.2, 0.05, 0.7006, 2.0], atol=2e-3)


def test_to_tensor_of_a_list_of_tensors_keeps_their_dtype():
    # paddle 3.3.1: float64, int32, float16, bfloat16, complex128 (pycoll gave float32/int64/complex64)
    for dtype, value in (("float64", 1.5), ("int32", 1), ("float16", 1.5), ("bfloat16", 1.5), ("complex128", 1j)):
        t = pycoll.to_tensor(value, dtype=dtype)
        assert str(pycoll.to_tensor([t, t]).dtype) == dtype
    assert str(pycoll.to_tensor([pycoll.to_tensor(1, dtype="int32"), pycoll.to_tensor(2.5)]).dtype) == "float64"
    assert str(pycoll.to_tensor([[pycoll.to_tensor([1.5], dtype="float64")]]).dtype) == "float64"
    assert str(pycoll.to_tensor([1.5, 2.5]).dtype) == "float32"  # numbers: the default dtype, as before


def test_complex_with_integer_tensors_and_complex_norms_as_paddles():
    a = pycoll.to_tensor([1 + 2j, 3 - 1j])
    for other in (pycoll.to_tensor([2, 3]), pycoll.to_tensor([2, 3], dtype="int32"), pycoll.to_tensor([True, False])):
        assert str((a + other).dtype) == "complex64" and str((other * a).dtype) == "complex64"
    np.testing.assert_allclose((a * pycoll.to_tensor([2, 3])).numpy(), [2 + 4j, 9 - 3j])
    m = pycoll.to_tensor([[1 + 2j, 3 - 1j], [0.5j, 2]])
    for norm in (pycoll.linalg.norm(m), pycoll.linalg.vector_norm(m), pycoll.linalg.matrix_norm(m)):
        assert str(norm.dtype) == "float32"
        np.testing.assert_allclose(float(norm), 4.3874822, rtol=1e-6)
    for p in ("nuc", 2, -2, 1, np.inf):
        np.testing.assert_allclose(float(pycoll.linalg.norm(m, p, axis=[0, 1])), np.linalg.norm(m.numpy(), p), rtol=1e-5)
    x = pycoll.to_tensor([[1 + 2j, 3 - 1j]], stop_gradient=False)
    pycoll.linalg.norm(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.2581989 + 0.5163978j, 0.7745967 - 0.2581989j]], rtol=1e-6)  # paddle's
    with pytest.raises(TypeError, match="normalize: x must hold floating-point numbers"):
        F.normalize(m)  # paddle has no kernel; the magnitudes were squared as complex numbers


def test_bfloat16_can_be_the_default_dtype():
    try:
        pycoll.set_default_dtype("bfloat16")
        assert pycoll.get_default_dtype() == "bfloat16"
        layer = nn.Linear(4, 3)
        assert str(layer.weight.dtype) == str(pycoll.to_tensor([1.5]).dtype) == "bfloat16"
        assert str(layer(pycoll.randn([2, 4])).dtype) == "bfloat16"
    finally:
        pycoll.set_default_dtype("float32")


@pytest.mark.parametrize("dtype", HALVES)
def test_linear_algebra_of_16_bit_matrices_runs_in_float32_and_keeps_the_dtype(dtype):
    a = pycoll.to_tensor([[2.0, 1.0], [1.0, 3.0]])
    half = a.astype(dtype)
    for op in (pycoll.linalg.inv, pycoll.linalg.det, pycoll.linalg.cov, lambda t: pycoll.linalg.svd(t)[1],
               lambda t: pycoll.linalg.solve(t, t), pycoll.linalg.cholesky, pycoll.linalg.pinv):
        out = op(half)  # float16: NumPy's "array type float16 is unsupported in linalg"; bfloat16 gave float64
        assert str(out.dtype) == dtype
        np.testing.assert_allclose(out.astype("float32").numpy(), op(a).numpy(), rtol=1e-2, atol=1e-2)
    assert int(pycoll.linalg.matrix_rank(pycoll.eye(3).astype(dtype))) == 3


def test_an_activation_refusing_integers_names_itself():
    with pytest.raises(TypeError, match="relu6: x must hold floating-point numbers, got dtype int64"):
        F.relu6(pycoll.to_tensor([1, 8]))


def test_mixed_16_bit_tensors_and_integer_activations_as_paddles():
    f16, bf16 = pycoll.to_tensor(1.0, dtype="float16"), pycoll.to_tensor(2.0, dtype="bfloat16")
    assert str(pycoll.to_tensor([f16, bf16]).dtype) == "float32"  # NumPy knows no common dtype: it refused
    try:
        pycoll.set_default_dtype("float16")
        assert str(pycoll.to_tensor(1 + 2j).dtype) == "complex64"  # complex128 before
    finally:
        pycoll.set_default_dtype("float32")
    for act in (F.gelu, F.silu, F.elu, F.leaky_relu, F.softplus, F.swish):
        with pytest.raises(TypeError, match="must hold floating-point numbers, got dtype int64"):
            act(pycoll.to_tensor([-2, 0, 3]))  # truncated before: gelu gave [0, 0, 2]
