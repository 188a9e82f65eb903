"""16-bit floats and integer dtypes in reductions, products and arithmetic, as paddle 3.3.1's.

Where paddle's CPU build has a kernel the expected numbers were measured on it; where it has none
for bfloat16/float16 (mean, var, cumsum, matmul, ...) the reference is the float32 result rounded
once to the 16-bit dtype, which is what paddle's GPU kernels and torch give."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
RAND = np.random.RandomState(0).rand(3000).astype("float32")


def _f32(t):
    return t.astype("float32").numpy()


def _bf16(values):
    return np.asarray(values, "float32").astype(BF16).astype("float32")


def test_bf16_and_fp16_sums_accumulate_in_float32():
    ones = pycoll.ones([3000], dtype="bfloat16")
    s = ones.sum()
    assert s.dtype == BF16 and float(_f32(s)) == 3008.0  # paddle 3.3.1: 3008 (3000 rounded to bfloat16)
    rand = pycoll.to_tensor(RAND)
    assert float(_f32(rand.astype("bfloat16").sum())) == 1512.0  # paddle 3.3.1
    np.testing.assert_array_equal(_f32(rand.reshape([3, 1000]).astype("bfloat16").sum(axis=1)), [496, 512, 506])  # paddle
    assert float(rand.astype("float16").sum().numpy()) == 1513.0  # paddle 3.3.1
    assert ones.sum(dtype="float32").dtype == np.float32 and float(ones.sum(dtype="float32")) == 3000  # paddle
    half = pycoll.ones([3000]).sum(dtype="float16")
    assert half.dtype == np.float16 and float(half) == 3000  # paddle 3.3.1
    assert float(pycoll.nansum(ones).astype("float32")) == 3008.0


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_16_bit_reductions_round_the_float32_result_once(dt):
    a = pycoll.to_tensor(RAND).astype(dt)
    wide = a.astype("float32")
    x = wide.numpy()

    def same(got, want):
        assert got.dtype == a.dtype, got.dtype
        np.testing.assert_array_equal(_f32(got), np.asarray(want, "float32").astype(a.dtype).astype("float32"))
    same(a.mean(), x.mean())
    same(pycoll.var(a), wide.var().numpy())
    same(pycoll.std(a), wide.std().numpy())
    same(pycoll.cumsum(a), np.cumsum(x))  # float16's ran to 2048 and stopped, bfloat16's to 256
    b = a[:20] + 0.5
    same(pycoll.prod(b), np.prod(_f32(b)))
    same(pycoll.cumprod(b, dim=0), np.cumprod(_f32(b)))
    same(pycoll.logsumexp(a), np.log(np.exp(x).sum()))
    same(pycoll.dot(a, a), x @ x)
    same(pycoll.matmul(a.reshape([1, -1]), a.reshape([-1, 1])), x[None] @ x[:, None])
    same(pycoll.einsum("i,i->", a, a), x @ x)
    w = a.reshape([1000, 3])
    same(F.linear(a.reshape([1, 1000, 3])[:, :, 0], w), x.reshape(1000, 3)[:, 0][None] @ x.reshape(1000, 3))
    assert float(_f32(pycoll.ones([3000], dtype=dt).mean())) == 1.0
    assert float(_f32(pycoll.var(pycoll.ones([3000], dtype=dt)))) == 0.0


def test_16_bit_gradients_come_back_in_their_dtype():
    x = pycoll.ones([3000], dtype="bfloat16")
    x.stop_gradient = False
    x.sum().backward()
    assert x.grad.dtype == BF16 and (_f32(x.grad) == 1).all()  # paddle 3.3.1: bfloat16 ones
    a = pycoll.to_tensor(RAND[:6].reshape(2, 3)).astype("bfloat16")
    b = pycoll.to_tensor(RAND[6:12].reshape(3, 2)).astype("bfloat16")
    a.stop_gradient = b.stop_gradient = False
    pycoll.matmul(a, b).sum().backward()
    assert a.grad.dtype == b.grad.dtype == BF16
    want = np.ones((2, 2), "float32") @ _f32(b).T
    np.testing.assert_array_equal(_f32(a.grad), want.astype(BF16).astype("float32"))


def test_bf16_is_a_floating_dtype_for_promotion():
    x = pycoll.arange(1, 9).astype("bfloat16")
    for out in (x * 0.1, x / 3, x - 0.1, x * 2):
        assert out.dtype == BF16
    # paddle 3.3.1's values (as it printed them; each is one bfloat16 number)
    np.testing.assert_array_equal(_f32(x * 0.1), _bf16([0.10009766, 0.20019531, 0.30078125, 0.40039062, 0.5,
                                                             0.6015625, 0.69921875, 0.80078125]))
    np.testing.assert_array_equal(_f32(x / 3), _bf16([0.33398438, 0.66796875, 1., 1.3359375, 1.6640625, 2.,
                                                           2.328125, 2.671875]))
    np.testing.assert_array_equal(_f32(x - 0.1), _bf16([0.8984375, 1.8984375, 2.90625, 3.90625, 4.90625, 5.90625,
                                                             6.90625, 7.90625]))
    assert (x + pycoll.ones([8], dtype="float16")).dtype == np.float32  # paddle: bfloat16 + float16 -> float32
    assert (x + pycoll.ones([8])).dtype == np.float32 and (x + pycoll.ones([8], dtype="float64")).dtype == np.float64
    assert (pycoll.to_tensor(1.0, dtype="float16") + x).dtype == BF16  # a 0-d tensor acts as a number
    with pytest.raises(TypeError, match="bfloat16"):
        x + pycoll.arange(8)  # paddle: TypeError, no promotion between float and int tensors
    assert pycoll.logsumexp(x).dtype == BF16


def test_integer_sum_and_cumprod_dtypes():
    # paddle 3.3.1: int8, uint8 and int16 keep their dtype and wrap; bool and int32 give int64
    cases = [("int8", [100] * 3, "int8", 44), ("uint8", [200] * 3, "uint8", 88), ("int16", [100] * 3, "int16", 300),
             ("int32", [100] * 3, "int64", 300), ("bool", [True] * 3, "int64", 3), ("int64", [100] * 3, "int64", 300)]
    for dt, values, out_dt, total in cases:
        t = pycoll.to_tensor(values, dtype=dt)
        for s in (t.sum(), pycoll.sum(t.reshape([1, 3]), axis=1)):
            assert s.dtype == np.dtype(out_dt) and int(s.numpy().sum()) == total, (dt, s.dtype, s.numpy())
    assert pycoll.nansum(pycoll.to_tensor([1, 2], dtype="int32")).dtype == np.int64  # paddle 3.3.1
    c = pycoll.cumprod(pycoll.to_tensor([100] * 3, dtype="int32"), dim=0)
    assert c.dtype == np.int32 and c.numpy().tolist() == [100, 10000, 1000000]  # paddle 3.3.1
    assert pycoll.cumsum(pycoll.to_tensor([100] * 3, dtype="int8")).numpy().tolist() == [100, 200, 300]  # int64


def test_integer_to_negative_integer_power():
    x = pycoll.to_tensor([2, -1, 3, -2])
    # paddle 3.3.1's values (NumPy refuses negative integer powers of integers)
    assert (2 ** x).dtype == np.int64 and (2 ** x).numpy().tolist() == [4, 0, 8, 0]
    assert ((-1) ** x).numpy().tolist() == [1, -1, -1, 1]
    assert ((-2) ** x).numpy().tolist() == [4, 0, -8, 0]
    assert (0 ** x).numpy().tolist() == [0, 0, 0, 0]
    base = pycoll.to_tensor([2, 2, 1, -1, 0, 3])
    assert (base ** pycoll.to_tensor([-1, -2, -3, -3, -1, 0])).numpy().tolist() == [0, 0, 1, -1, 0, 1]
    i32 = 2 ** x.astype("int32")
    assert i32.dtype == np.int32 and i32.numpy().tolist() == [4, 0, 8, 0]
    assert (base ** -1).numpy().tolist() == [0, 0, 1, -1, 0, 0]  # 1 / base truncated (paddle hangs here)
    assert (2.0 ** x).numpy().tolist() == [4.0, 0.5, 8.0, 0.25]  # paddle 3.3.1: float32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_integer_powers_of_negative_floats_keep_their_sign(dtype):
    """pow takes |x| ** n with the sign put back for odd n (the C library's pow is ~50x slower on
    negative bases): within NumPy's own last bit, -0 and infinities included."""
    x = np.concatenate([np.random.RandomState(3).randn(500) * 3, [0.0, -0.0, np.inf, -np.inf, -1.0]]).astype(dtype)
    for n in (3, 4, 5, -3, -4, 3.0, 10):
        with np.errstate(all="ignore"):
            want = x ** n
        got = (pycoll.to_tensor(x) ** n).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dtype).eps, atol=0)
    np.testing.assert_array_equal(pycoll.pow(input=pycoll.to_tensor(x), exponent=3).numpy(), (pycoll.to_tensor(x) ** 3).numpy())


def test_pow_derivatives_at_a_zero_base():
    """d/dx x ** 0 is 0 at x = 0 too (paddle 3.3.1's first derivative; its second of pow(x, 0)
    is NaN, pycoll's the 0 it is), so are the derivatives past a power's degree; a zero power
    adds nothing to d/dy x ** y (under create_graph too); a negative number base gives NaN for
    d/dy, as paddle's."""
    x = pycoll.to_tensor([0.0, 2.0], dtype="float64", stop_gradient=False)
    for p, wants in ((0.0, [[0, 0]] * 3), (1.0, [[1, 1], [0, 0], [0, 0]]), (3.0, [[0, 12], [0, 12], [6, 6]])):
        g = pycoll.pow(x, p).sum()
        for want in wants:
            (g,) = pycoll.grad(g.sum(), x, create_graph=True)
            np.testing.assert_array_equal(g.numpy(), want)
    y = pycoll.to_tensor([2.0, 3.0], dtype="float64", stop_gradient=False)
    (gy,) = pycoll.grad(pycoll.pow(x, y).sum(), y, create_graph=True)
    np.testing.assert_allclose(gy.numpy(), [0.0, 8 * np.log(2)], rtol=1e-12)
    (gyx,) = pycoll.grad(gy.sum(), x)
    np.testing.assert_allclose(gyx.numpy(), [0.0, 3 * 4 * np.log(2) + 4], rtol=1e-12)
    for create_graph in (False, True):  # d/dy of 0 ** 0 too (paddle 3.3.1: [0, 0, log 2])
        y = pycoll.to_tensor([0.0, 2.0, 0.0], dtype="float64", stop_gradient=False)
        (gy,) = pycoll.grad(pycoll.pow(pycoll.to_tensor([0.0, 0.0, 2.0], "float64"), y).sum(), y,
                            create_graph=create_graph)
        np.testing.assert_allclose(gy.numpy(), [0.0, 0.0, np.log(2)], rtol=1e-12)
    e = pycoll.to_tensor([2.0, 3.0], stop_gradient=False)
    ((-2.0) ** e).sum().backward()
    assert np.isnan(e.grad.numpy()).all()


def test_bf16_order_statistics_leave_nans_out():
    x = pycoll.to_tensor([1.0, float("nan"), 3.0, 2.0]).astype("bfloat16")  # ml_dtypes sorts the NaN in place
    assert float(_f32(pycoll.nanmedian(x))) == 2.0 and float(_f32(pycoll.nanquantile(x, 0.75))) == 2.5
    assert np.isnan(float(pycoll.median(x).numpy())) and float(_f32(pycoll.kthvalue(x, 3)[0])) == 3.0


def test_bf16_counts_as_floating_for_norms_layers_and_creation():
    """bfloat16 (NumPy kind 'V') is floating wherever pycoll asks: linalg norms (accumulated in
    float32: sqrt(3000) = 54.77 rounds to 54.75), Layer.to(dtype='bfloat16') converting the
    parameters, and float-only creation; paddle's full([2], True) is bool."""
    ones = pycoll.ones([3000], dtype="bfloat16")
    norm = pycoll.linalg.norm(ones)
    assert norm.dtype.name == "bfloat16" and float(norm) == 54.75
    layer = pycoll.nn.Linear(2, 2)
    layer.to(dtype="bfloat16")
    assert layer.weight.dtype.name == "bfloat16"
    assert layer(pycoll.ones([1, 2], dtype="bfloat16")).dtype.name == "bfloat16"
    assert pycoll.rand([2], dtype="bfloat16").dtype.name == "bfloat16"
    assert pycoll.full([2], True).dtype == np.bool_ and pycoll.full([2], 3).dtype == np.float32
