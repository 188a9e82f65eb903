"""pycoll.kernels (flatten / unflatten over pycoll._C) against NumPy, bit for bit."""

import threading
import time

import numpy as np
import pytest

import pycoll
from pycoll import kernels

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
CASTS = [(F32, F16), (F16, F32), (F64, F32), (F32, F64), (F16, F16), (F32, F32), (F64, F64)]
SCALES = [None, 0.5, 1 / 3, -2.5, 3, 1e-5, 1e30]
SIZES = [1, 3, 7, 0, 1023, 1, 4097, 15, 16, 17]  # odd sizes exercise the vector loops' tails

PLAIN_DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    np.bool_,
    "S5",
    ">i4",
    [("a", "<i2"), ("b", "<f8")],
]


# --- helpers ---------------------------------------------------------------------------------


def random_data(dtype, size, rng):
    """Values of every kind: random bit patterns (all exponents, subnormals, inf, NaN) and
    ordinary numbers, plus the specials."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        bits = np.dtype(f"u{dtype.itemsize}")
        raw = rng.integers(0, np.iinfo(bits).max, size=size, dtype=bits, endpoint=True).view(dtype)
        with np.errstate(over="ignore"):  # float16 overflows to inf: wanted
            normal = (rng.standard_normal(size) * 10.0 ** rng.integers(-8, 6, size)).astype(dtype)
            specials = np.array(
                [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504, 65520], dtype
            )
        out = np.where(rng.random(size) < 0.5, raw, normal)
        n = min(size, specials.size)
        out[:n] = specials[:n]
        return out
    if dtype.kind == "b":
        return rng.random(size) < 0.5
    if dtype.kind == "c":
        return (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)
    # integers, strings, structured: random bytes
    return np.frombuffer(rng.bytes(size * dtype.itemsize), dtype=dtype).copy()


def make_arrays(dtype, sizes, rng):
    shapes = [(n,) if i % 3 else (n, 1) if i % 2 else (1, n, 1) for i, n in enumerate(sizes)]
    return [random_data(dtype, n, rng).reshape(s) for n, s in zip(sizes, shapes)]


def reference(a, src, dst, scale):
    """NumPy's answer: (a.astype(wide) * scale).astype(dst), wide the wider of src and dst."""
    wide = src if src.itemsize >= dst.itemsize else dst
    with np.errstate(all="ignore"):
        if scale is None:
            return a.astype(dst)
        return (a.astype(wide) * scale).astype(dst)


def assert_same(got, want):
    """Same dtype and shape, same bits; NaNs need only be NaNs (payloads may differ between
    NumPy builds that convert float16 in hardware and those that do it in software)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        bits = np.dtype(f"u{got.dtype.itemsize}")
        np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))
    else:
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def ravel_all(arrays):
    """NumPy's flatten; concatenate turns a non-native byte order native, so turn it back."""
    return np.concatenate([a.ravel() for a in arrays]).astype(arrays[0].dtype, copy=False)


# --- plain copies ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", PLAIN_DTYPES, ids=str)
def test_plain_copy_every_dtype(dtype):
    rng = np.random.default_rng(0)
    arrays = make_arrays(dtype, SIZES, rng)
    flat = kernels.flatten(arrays)
    assert flat.ndim == 1 and flat.dtype == np.dtype(dtype)
    assert_same(flat, ravel_all(arrays))
    back = [np.zeros_like(a) for a in arrays]
    assert kernels.unflatten(flat, back) is None
    for b, a in zip(back, arrays):
        assert_same(b, a)


def test_many_tiny_arrays():
    rng = np.random.default_rng(1)
    arrays = make_arrays(np.float32, rng.integers(0, 4, size=5000), rng)
    assert_same(kernels.flatten(arrays), ravel_all(arrays))
    assert_same(
        kernels.flatten(arrays, scale=0.25, dtype=F16), reference(ravel_all(arrays), F32, F16, 0.25)
    )
    back = [np.empty_like(a) for a in arrays]
    kernels.unflatten(ravel_all(arrays), back, scale=2.0)
    for b, a in zip(back, arrays):
        assert_same(b, reference(a, F32, F32, 2.0))


def test_one_large_array():
    rng = np.random.default_rng(2)
    a = random_data(F32, 3_000_001, rng).reshape(1, -1)
    assert_same(kernels.flatten([a]), a.ravel())
    assert_same(kernels.flatten([a], scale=1 / 7), reference(a.ravel(), F32, F32, 1 / 7))
    assert_same(kernels.flatten((a,), dtype=F16), reference(a.ravel(), F32, F16, None))


def test_zero_size_arrays():
    a = np.arange(5, dtype=np.float64)
    empty = np.empty((0, 3))
    arrays = [empty, a, np.empty(0), a[:0], a * 2, empty]
    assert_same(kernels.flatten(arrays), np.concatenate([a, a * 2]))
    assert_same(
        kernels.flatten(arrays, dtype=F32, scale=3), (np.concatenate([a, a * 2]) * 3).astype(F32)
    )
    only_empty = kernels.flatten([np.empty(0, np.int16), np.empty((2, 0), np.int16)])
    assert only_empty.shape == (0,) and only_empty.dtype == np.int16
    back = [np.full_like(x, -1) for x in arrays]
    kernels.unflatten(np.arange(10.0), back)
    assert_same(back[1], np.arange(5.0))
    assert_same(back[4], np.arange(5.0, 10.0))
    assert back[0].shape == (0, 3) and back[2].shape == (0,)


# --- casts and scale -------------------------------------------------------------------------


@pytest.mark.parametrize("scale", SCALES, ids=repr)
@pytest.mark.parametrize("src,dst", CASTS, ids=lambda d: str(d))
def test_flatten_cast_and_scale(src, dst, scale):
    rng = np.random.default_rng(3)
    arrays = make_arrays(src, SIZES, rng)
    got = kernels.flatten(arrays, scale=scale, dtype=dst)
    assert_same(got, reference(ravel_all(arrays), src, dst, scale))


@pytest.mark.parametrize("scale", SCALES, ids=repr)
@pytest.mark.parametrize("src,dst", CASTS, ids=lambda d: str(d))
def test_unflatten_cast_and_scale(src, dst, scale):
    rng = np.random.default_rng(4)
    flat = random_data(src, sum(SIZES), rng).reshape(1, -1)  # any C-contiguous shape will do
    arrays = [np.full(s, 7, dtype=dst) for s in [(n,) if n % 2 else (n, 1) for n in SIZES]]
    kernels.unflatten(flat, arrays, scale=scale)
    assert_same(ravel_all(arrays), reference(flat.ravel(), src, dst, scale))


def test_float16_rounding_exact_bits():
    """Known answers, not only NumPy's: ties to even, subnormals, overflow, signed zero."""
    cases = [
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (1.0, 0x3C00),
        (65504.0, 0x7BFF),
        (65519.99, 0x7BFF),
        (65520.0, 0x7C00),
        (1e6, 0x7C00),
        (-1e6, 0xFC00),
        (np.inf, 0x7C00),
        (2.0**-24, 0x0001),
        (2.0**-25, 0x0000),
        (2.0**-25 * (1 + 2.0**-23), 0x0001),
        (1.5 * 2.0**-24, 0x0002),
        (2.5 * 2.0**-24, 0x0002),
        (3.5 * 2.0**-24, 0x0004),
        (2.0**-14, 0x0400),
        (2.0**-14 - 2.0**-25, 0x0400),
        (1022.5 * 2.0**-24, 0x03FE),
        (1 + 2.0**-11, 0x3C00),
        (1 + 3 * 2.0**-11, 0x3C02),
        (-(1 + 2.0**-11 + 2.0**-23), 0xBC01),
        (1e-8, 0x0000),
        (-1e-8, 0x8000),
        (1e-45, 0x0000),
    ]
    x = np.array([v for v, _ in cases], dtype=np.float32)
    got = kernels.flatten([x], dtype=F16).view(np.uint16)
    np.testing.assert_array_equal(got, np.array([b for _, b in cases], dtype=np.uint16))
    assert_same(kernels.flatten([x], dtype=F16), reference(x, F32, F16, None))
    nan = kernels.flatten([np.array([np.nan, -np.nan], F32)], dtype=F16)
    assert np.isnan(nan).all() and list(np.signbit(nan)) == [False, True]


def test_float16_rounding_sweep():
    """Every sign, exponent and top-10 significand bits, each with the interesting low bits
    (exact, just below / at / just above the halfway point, all ones), against NumPy."""
    high = np.arange(1 << 19, dtype=np.uint32) << 13
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF], dtype=np.uint32)
    x = (high[:, None] | low[None, :]).ravel().view(np.float32)
    assert_same(kernels.flatten([x], dtype=F16), reference(x, F32, F16, None))
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    assert_same(kernels.flatten([h], dtype=F32), reference(h, F16, F32, None))
    assert_same(kernels.flatten([h], scale=0.1), reference(h, F16, F16, 0.1))


def test_float16_scale_rounds_from_double_directly():
    # 1 + 2**-11 + 2**-40 rounds to 1 + 2**-10 in half; through float it would tie and go to 1.
    s = 1 + 2.0**-11 + 2.0**-40
    got = kernels.flatten([np.ones(3, F16)], scale=s)
    np.testing.assert_array_equal(got, np.full(3, 1 + 2.0**-10, F16))
    assert_same(got, np.ones(3, F16) * s)


def test_round_trip():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s).astype(F32) for s in [(3, 4), (7,), (0,), (2, 2, 2), (1,)]]
    for dtype, scale, inverse in [
        (None, None, None),
        (F64, None, None),
        (F32, 0.5, 2.0),
        (F64, 8, 0.125),
    ]:
        flat = kernels.flatten(arrays, scale=scale, dtype=dtype)
        back = [np.empty_like(a) for a in arrays]
        kernels.unflatten(flat, back, scale=inverse)
        for b, a in zip(back, arrays):
            assert_same(b, a)


def test_out_is_filled_and_returned():
    arrays = [np.arange(6, dtype=F32).reshape(2, 3), np.arange(4, dtype=F32)]
    out = np.full((2, 5), -1, dtype=F16)  # any C-contiguous shape of the right size
    res = kernels.flatten(arrays, out, dtype=F16, scale=0.5)
    assert res is out
    assert_same(out.ravel(), (ravel_all(arrays) * 0.5).astype(F16))
    out32 = np.empty(10, F32)
    assert kernels.flatten(arrays, out=out32) is out32
    assert_same(out32, ravel_all(arrays))


def test_read_only_sources_are_fine():
    a = np.arange(4.0)
    a.flags.writeable = False
    assert_same(kernels.flatten([a]), a)
    back = [np.empty(4)]
    kernels.unflatten(a, back)
    assert_same(back[0], a)


def test_concurrent_calls_from_threads():
    rng = np.random.default_rng(6)
    jobs = [make_arrays(F32, [100_000, 3, 50_000], rng) for _ in range(4)]
    results = [None] * len(jobs)

    def work(i):
        for _ in range(20):
            results[i] = kernels.flatten(jobs[i], scale=0.5, dtype=F16)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for arrays, got in zip(jobs, results):
        assert_same(got, reference(ravel_all(arrays), F32, F16, 0.5))


def test_gil_released_while_copying():
    """While a large copy runs in a thread, this thread keeps running Python code. Judged by the
    longest pause this thread sees against the copy's own length, not by absolute times."""
    arrays = [np.ones(32 << 20, dtype=np.uint8)] * 8
    out = kernels.flatten(arrays)  # one call of ~256 MiB; the pages are faulted in now

    def attempt():
        done = threading.Event()
        span = []

        def copy():
            t0 = time.perf_counter()
            kernels.flatten(arrays, out)
            span.append(time.perf_counter() - t0)
            done.set()

        t = threading.Thread(target=copy)
        last, longest = time.perf_counter(), 0.0
        t.start()
        while not done.is_set():
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        t.join()
        return longest < 0.5 * span[0]

    assert any(attempt() for _ in range(3))


# --- 64-bit offsets --------------------------------------------------------------------------


def test_unflatten_total_past_2_31_elements():
    """64-bit offsets: 2**31 + 100 uint8 elements. The flat buffer is calloc'ed zero pages that
    are only read, so this costs 128 MiB of real memory and about a second."""
    flat = np.zeros(2**31 + 100, dtype=np.uint8)
    flat[-100:] = np.arange(100, dtype=np.uint8)
    chunk = np.full(2**27, 0xFF, dtype=np.uint8)
    tail = np.empty(100, dtype=np.uint8)
    kernels.unflatten(flat, [chunk] * 16 + [tail])
    np.testing.assert_array_equal(tail, np.arange(100, dtype=np.uint8))
    assert not chunk.any()


def _available_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@pytest.mark.skipif(
    _available_memory() < 8 << 30, reason="needs about 2.3 GiB; run where 8 GiB are free"
)
def test_flatten_total_past_2_31_elements():
    """64-bit offsets: 2**31 + 100 uint8 elements written (2.1 GiB output, a few seconds)."""
    chunk = np.zeros(2**27, dtype=np.uint8)
    tail = np.arange(100, dtype=np.uint8)
    out = kernels.flatten([chunk] * 16 + [tail])
    assert out.size == 2**31 + 100
    np.testing.assert_array_equal(out[-100:], tail)
    assert not out[2**31 - 2**20 : 2**31].any()


# --- errors ----------------------------------------------------------------------------------


class FakeDeviceArray:
    """Looks like a CuPy array to the kernels."""

    shape, dtype = (3,), np.dtype(np.float32)

    @property
    def __cuda_array_interface__(self):
        return {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}


F = "pycoll.kernels.flatten: "
U = "pycoll.kernels.unflatten: "
ok = np.arange(4, dtype=F32)
ro = np.arange(4, dtype=F32)
ro.flags.writeable = False
strided = np.arange(20, dtype=F32).reshape(4, 5)[:, :2]


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (
            lambda: kernels.flatten(ok),
            TypeError,
            F + "arrays must be a list or tuple.*numpy.ndarray",
        ),
        (lambda: kernels.flatten([]), ValueError, F + "arrays is empty"),
        (
            lambda: kernels.flatten([ok, [1.0, 2.0]]),
            TypeError,
            F + r"arrays\[1\] is a list; need a numpy.ndarray",
        ),
        (
            lambda: kernels.flatten([ok, FakeDeviceArray()]),
            TypeError,
            F + r"arrays\[1\] is a device array \(.*FakeDeviceArray\), but arrays\[0\] is a "
            "numpy.ndarray; pass host arrays only or device arrays only",
        ),
        (  # a CPU tensor's type has the device interface's property, which the tensor refuses
            lambda: kernels.flatten([pycoll.to_tensor(ok)]),
            TypeError,
            F + r"arrays\[0\] is a pycoll.tensor.Tensor; need a numpy.ndarray",
        ),
        (
            lambda: kernels.flatten([ok, ok, ok.astype(F64)]),
            TypeError,
            F + r"arrays\[2\] has dtype float64, but arrays\[0\] has float32",
        ),
        (lambda: kernels.flatten([np.array([None, 1])]), TypeError, F + "arrays have dtype object"),
        (
            lambda: kernels.flatten([ok, ok, ok, strided]),
            ValueError,
            F + r"arrays\[3\] is not C-contiguous \(shape \(4, 2\), strides \(20, 4\)\); "
            "pass a contiguous copy",
        ),
        (
            lambda: kernels.flatten([ok], scale="0.5"),
            TypeError,
            F + r"scale must be an int or float, got str \('0.5'\)",
        ),
        (
            lambda: kernels.flatten([ok], scale=1j),
            TypeError,
            F + "scale must be an int or float, got complex",
        ),
        (
            lambda: kernels.flatten([ok], scale=True),
            TypeError,
            F + "scale must be an int or float, got bool",
        ),
        (
            lambda: kernels.flatten([ok], scale=np.ones(1)),
            TypeError,
            F + "scale must be an int or float",
        ),
        (lambda: kernels.flatten([ok], scale=10**400), ValueError, F + "scale .* too large"),
        (
            lambda: kernels.flatten([np.arange(3)], scale=0.5),
            TypeError,
            F + "scale needs float16, bfloat16, float32 or float64 data.*got int64",
        ),
        (
            lambda: kernels.flatten([ok.astype(">f4")], scale=0.5),
            TypeError,
            F + "scale needs .*native byte order",
        ),
        (
            lambda: kernels.flatten([ok.astype(F64)], dtype=F16),
            TypeError,
            F + r"cannot cast the arrays \(float64\) to dtype float16; the casts served are",
        ),
        (
            lambda: kernels.flatten([ok], dtype=np.int32),
            TypeError,
            F + r"cannot cast the arrays \(float32\) to dtype int32",
        ),
        (
            lambda: kernels.flatten([ok], dtype="no-such-dtype"),
            TypeError,
            F + "dtype must be a numpy dtype, got 'no-such-dtype'",
        ),
        (
            lambda: kernels.flatten([ok], out=[0.0] * 4),
            TypeError,
            F + "out is a list; need a numpy.ndarray",
        ),
        (
            lambda: kernels.flatten([ok], out=FakeDeviceArray()),
            TypeError,
            F + "out is a device array",
        ),
        (
            lambda: kernels.flatten([ok], out=np.empty(4, F64)),
            TypeError,
            F + r"out has dtype float64, need float32 \(pass dtype= to cast\)",
        ),
        (
            lambda: kernels.flatten([ok], out=np.empty(4, F16), dtype=F32),
            TypeError,
            F + "out has dtype float16, need float32",
        ),
        (
            lambda: kernels.flatten([ok, ok], out=np.empty(7, F32)),
            ValueError,
            F + r"out has 7 elements \(shape \(7,\)\), need exactly 8",
        ),
        (
            lambda: kernels.flatten([ok], out=np.empty(8, F32)[::2]),
            ValueError,
            F + "out is not C-contiguous",
        ),
        (lambda: kernels.flatten([ok], out=ro), ValueError, F + "out is read-only"),
        (lambda: kernels.unflatten(ok, ok), TypeError, U + "arrays must be a list or tuple"),
        (lambda: kernels.unflatten(ok, ()), ValueError, U + "arrays is empty"),
        (
            lambda: kernels.unflatten([1.0] * 4, [ok.copy()]),
            TypeError,
            U + "flat is a list; need a numpy.ndarray",
        ),
        (
            lambda: kernels.unflatten(FakeDeviceArray(), [ok.copy()]),
            TypeError,
            U + "flat is a device array",
        ),
        (
            lambda: kernels.unflatten(ok, [FakeDeviceArray()]),
            TypeError,
            U + r"arrays\[0\] is a device array",
        ),
        (
            lambda: kernels.unflatten(ok, [ok.copy()[:2], ro[:2]]),
            ValueError,
            U + r"arrays\[1\] is read-only",
        ),
        (
            lambda: kernels.unflatten(ok, [np.empty(8, F32)[::2]]),
            ValueError,
            U + r"arrays\[0\] is not C-contiguous",
        ),
        (
            lambda: kernels.unflatten(ok, [np.empty(2, F32), np.empty(2, F16)]),
            TypeError,
            U + r"arrays\[1\] has dtype float16",
        ),
        (
            lambda: kernels.unflatten(ok, [np.empty(5, F32)]),
            ValueError,
            U + r"flat has 4 elements \(shape \(4,\)\), need exactly 5",
        ),
        (
            lambda: kernels.unflatten(np.empty(8, F32)[::2], [np.empty(4, F32)]),
            ValueError,
            U + "flat is not C-contiguous",
        ),
        (
            lambda: kernels.unflatten(ok.astype(F64), [np.empty(4, F16)]),
            TypeError,
            U + r"cannot cast flat \(float64\) to the arrays' dtype float16",
        ),
        (
            lambda: kernels.unflatten(np.arange(4), [np.empty(4, np.int64)], scale=2),
            TypeError,
            U + "scale needs float16",
        ),
        (
            lambda: kernels.unflatten(ok, [np.empty(4, F32)], scale=[2]),
            TypeError,
            U + "scale must be an int or float, got list",
        ),
    ],
)
def test_errors_name_the_argument(call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call()
    assert type(info.value) is exc


def test_overlapping_buffers_are_refused():
    base = np.arange(10, dtype=F32)
    with pytest.raises(ValueError, match=r"pycoll.kernels.flatten: out overlaps arrays\[1\]"):
        kernels.flatten([np.ones(2, F32), base[3:6]], out=base[:5])
    with pytest.raises(ValueError, match=r"pycoll.kernels.unflatten: flat overlaps arrays\[0\]"):
        kernels.unflatten(base[:5], [base[4:9]])
    kernels.flatten([base[5:]], out=base[:5])  # adjacent is fine
    assert_same(base[:5], np.arange(5, 10, dtype=F32))


def test_compiled_module_checks_on_its_own():
    """pycoll._C is private, but a wrong call must raise, not corrupt memory."""
    from pycoll import _C

    with pytest.raises(ValueError, match="size"):
        _C.flatten([np.ones(4, F32)], np.empty(3, F32))
    with pytest.raises(ValueError, match="C-contiguous"):
        _C.unflatten(np.ones(2, F32), [np.empty(4, F32)[::2]])
    with pytest.raises(TypeError, match="converts"):
        _C.flatten([np.ones(4, F64)], np.empty(4, F16))
    with pytest.raises(TypeError, match="Python objects"):
        _C.flatten([np.array([None])], np.empty(1, object))


def test_build_info():
    info = kernels.build_info()
    assert info["host_kernels"] is True and isinstance(info["cuda_kernels"], bool)
    assert isinstance(info["compiler"], str) and info["compiler"]
    assert isinstance(info["pybind11"], str) and info["pybind11"][0].isdigit()


@pytest.mark.parametrize("scale", SCALES, ids=repr)
@pytest.mark.parametrize("src,dst", [("float32", "bfloat16"), ("bfloat16", "float32"), ("bfloat16", "bfloat16")])
def test_bfloat16_casts_and_scale_as_numpy_with_ml_dtypes(src, dst, scale):
    """bfloat16 (ml_dtypes') times a Python float is a float32 product in NumPy: the kernels'
    result is that product rounded once, on the host as on the device."""
    pytest.importorskip("ml_dtypes")
    src, dst = np.dtype(src), np.dtype(dst)
    rng = np.random.default_rng(7)
    width = np.dtype(f"u{src.itemsize}")
    raw = rng.integers(0, np.iinfo(width).max, size=3000, dtype=width, endpoint=True).view(src)
    normal = (rng.standard_normal(3000) * 10.0 ** rng.integers(-8, 6, 3000)).astype(src)
    a = np.where(rng.random(3000) < 0.5, raw, normal)
    a[:6] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]).astype(src)
    with np.errstate(all="ignore"):
        want = (a.astype(np.float32) if scale is None else a.astype(np.float32) * np.float32(scale)).astype(dst)
    got = kernels.flatten([a[:1000], a[1000:]], scale=scale, dtype=dst)
    back = [np.empty(1000, dst), np.empty(2000, dst)]
    kernels.unflatten(a, back, scale=scale)
    for result in (got, np.concatenate(back)):
        nan = np.isnan(want.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(result.astype(np.float32)), nan)
        bits = np.dtype(f"u{dst.itemsize}")
        np.testing.assert_array_equal(result[~nan].view(bits), want[~nan].view(bits))
