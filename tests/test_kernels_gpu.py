"""pycoll.kernels on device (CuPy) arrays.

Tests marked gpu need a CUDA GPU and CuPy (conftest skips them elsewhere): the CUDA kernels
against NumPy's answers bit for bit, and against CuPy's own copies; odd sizes, misaligned views,
many arrays, the kept tables, streams, and the CuPy fallback of a build without CUDA kernels.
The others run anywhere: what the build reports, and the errors device arguments get before any
device work (those with real cupy.ndarray objects need CuPy importable, not a GPU: their arrays
point at memory that is never touched).
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from pycoll import kernels
from pycoll.kernels import device as device_path
from test_kernels import SCALES, SIZES, FakeDeviceArray, assert_same, make_arrays, random_data
from test_kernels import ravel_all, reference

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BF16 = None

gpu = pytest.mark.gpu
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
# The pairs the device serves (by name, so that bfloat16 cases exist even where ml_dtypes does
# not; they skip there).
CASTS = [
    ("float32", "float16"), ("float16", "float32"), ("float64", "float32"), ("float32", "float64"),
    ("float32", "bfloat16"), ("bfloat16", "float32"),
    ("float16", "float16"), ("bfloat16", "bfloat16"), ("float32", "float32"),
    ("float64", "float64"),
]
PLAIN_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "complex64", "complex128", "bool", "bfloat16"]


def dt(name: str) -> np.dtype:
    if name == "bfloat16":
        if BF16 is None:
            pytest.skip("bfloat16 needs ml_dtypes")
        return BF16
    return np.dtype(name)


def assert_same_values(got, want):
    """assert_same, with bfloat16 compared through float32 (exactly), so that its NaNs, like the
    other floats', need only be NaNs."""
    if got.dtype.name == "bfloat16":
        assert want.dtype == got.dtype and got.shape == want.shape
        got, want = got.astype(F32), want.astype(F32)
    assert_same(got, want)


@pytest.fixture
def cp():
    import cupy

    return cupy


def host(arrays):
    return np.concatenate([a.get().ravel() for a in arrays])


# --- what the build says ---------------------------------------------------------------------


def _nvcc_at_build_time():
    """setup.py's rule: PYCOLL_CUDA=0 builds no CUDA kernels; otherwise nvcc from PATH or
    CUDA_HOME/bin decides (CI builds and tests in one environment)."""
    if os.environ.get("PYCOLL_CUDA", "auto").strip().lower() == "0":
        return None, False
    nvcc = shutil.which("nvcc")
    if nvcc is None and os.environ.get("CUDA_HOME"):
        nvcc = shutil.which("nvcc", path=os.path.join(os.environ["CUDA_HOME"], "bin"))
    return nvcc, nvcc is not None and sys.platform.startswith("linux")


def test_build_info_reports_cuda_kernels_as_built():
    _, expected = _nvcc_at_build_time()
    info = kernels.build_info()
    assert info["cuda_kernels"] is expected, info
    if not expected:
        assert not {"nvcc", "cuda_arch", "cuda_runtime"} & info.keys()


def test_build_info_names_nvcc_and_architectures():
    nvcc, expected = _nvcc_at_build_time()
    if not expected:
        pytest.skip("a build without CUDA kernels")
    info = kernels.build_info()
    version = re.search(r"V(\d+\.\d+\.\d+)", subprocess.run(
        [nvcc, "--version"], capture_output=True, text=True, check=True).stdout).group(1)
    assert info["nvcc"] == version
    archs = info["cuda_arch"].split(";")
    assert archs and all(re.fullmatch(r"\d+[a-z]?(\+PTX)?", a) for a in archs), archs
    assert info["cuda_runtime"].endswith("(static)")


def test_import_does_not_import_cupy():
    code = ("import sys, numpy as np; import pycoll.kernels as k; k.flatten([np.ones(3)]); "
            "assert 'cupy' not in sys.modules, 'cupy imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# --- errors before any device work (no GPU needed) -------------------------------------------


F = "pycoll.kernels.flatten: "
U = "pycoll.kernels.unflatten: "


def test_device_object_that_is_not_cupy_gets_a_clear_error():
    """A __cuda_array_interface__ object: CuPy missing, or present but not given a cupy.ndarray,
    either way a TypeError naming the argument, never a crash."""
    with pytest.raises(TypeError, match=F + r"arrays\[0\] is a device array \(.*FakeDeviceArray\)"):
        kernels.flatten([FakeDeviceArray()])
    with pytest.raises(TypeError, match=U + r"flat is a device array \(.*FakeDeviceArray\)"):
        kernels.unflatten(FakeDeviceArray(), [FakeDeviceArray()])


def _cuda_built():
    return kernels.build_info()["cuda_kernels"]


@pytest.mark.skipif(not _cuda_built(), reason="a build without CUDA kernels")
def test_compiled_cuda_entries_check_on_their_own():
    """pycoll._C's device entries are private, but a wrong call must raise, not launch."""
    from pycoll import _C

    t = _C.cuda_types
    ptr, other = 1 << 40, 1 << 41  # never touched: every call here fails its checks first
    with pytest.raises(ValueError, match=r"arrays\[0\] is not aligned"):
        _C.cuda_flatten([ptr + 2], [4], t["float32"], other, t["float32"], 2.0, 0, 0)
    with pytest.raises(ValueError, match="out is not aligned"):
        _C.cuda_flatten([ptr], [4], t["float32"], other + 1, t["float16"], None, 0, 0)
    with pytest.raises(ValueError, match=r"out overlaps arrays\[1\]"):
        _C.cuda_flatten([ptr, other + 8], [4, 4], t["float32"], other, t["float32"], 1.5, 0, 0)
    with pytest.raises(ValueError, match=r"flat overlaps arrays\[0\]"):
        _C.cuda_unflatten(ptr, t["bytes"], [ptr + 3], [5], t["bytes"], None, 0, 0)
    with pytest.raises(TypeError, match="no CUDA kernel converts and scales bytes"):
        _C.cuda_flatten([ptr], [4], t["bytes"], other, t["bytes"], 2.0, 0, 0)
    with pytest.raises(TypeError, match="no CUDA kernel converts float64 to float16"):
        _C.cuda_flatten([ptr], [4], t["float64"], other, t["float16"], None, 0, 0)
    with pytest.raises(ValueError, match="not a type code"):
        _C.cuda_flatten([ptr], [4], 9, other, t["float32"], None, 0, 0)
    with pytest.raises(ValueError, match="differ in length"):
        _C.cuda_flatten([ptr], [4, 4], t["float32"], other, t["float32"], None, 0, 0)
    with pytest.raises(ValueError, match="negative count"):
        _C.cuda_unflatten(other, t["float32"], [ptr], [-1], t["float32"], None, 0, 0)


@pytest.mark.skipif(not _cuda_built(), reason="a build without CUDA kernels")
def test_compiled_cuda_entry_reports_cuda_errors():
    """A CUDA failure is a RuntimeError with CUDA's message: here device -1, which fails with
    or without a GPU (without one, at the first CUDA call)."""
    from pycoll import _C

    t = _C.cuda_types
    with pytest.raises(RuntimeError, match=r"pycoll CUDA kernels: cuda\w+ failed: cudaError\w+"):
        _C.cuda_flatten([1 << 40], [4], t["float32"], 1 << 41, t["float32"], None, -1, 0)


def fake(cp, shape, dtype=F32, ptr=1 << 40, device=0):
    """A cupy.ndarray over memory that does not exist: fine for calls that fail their checks
    before any device work."""
    dtype = np.dtype(dtype)
    size = max(int(np.prod(shape)) * dtype.itemsize, 1)
    mem = cp.cuda.UnownedMemory(ptr, size, None, device_id=device)
    return cp.ndarray(shape, dtype, memptr=cp.cuda.MemoryPointer(mem, 0))


A, B, OUT, BASE = 1 << 40, (1 << 40) + 4096, 1 << 41, 1 << 42  # where the fake arrays start

DEVICE_ERRORS = [
    (lambda cp: kernels.flatten([fake(cp, 4), np.ones(3, F32)], out=fake(cp, 7, ptr=OUT)),
     TypeError, F + r"arrays\[1\] is a numpy.ndarray, but arrays\[0\] is a device array"),
    (lambda cp: kernels.flatten([fake(cp, 4)], out=np.empty(4, F32)),
     TypeError, F + r"out is a numpy.ndarray, but arrays\[0\] is a device array"),
    (lambda cp: kernels.flatten([np.ones(3, F32), fake(cp, 4)]),
     TypeError, F + r"arrays\[1\] is a device array \(cupy.ndarray\), but arrays\[0\] is a "
     "numpy.ndarray"),
    (lambda cp: kernels.flatten([fake(cp, 4), FakeDeviceArray()], out=fake(cp, 7, ptr=OUT)),
     TypeError, F + r"arrays\[1\] is a device array \(.*FakeDeviceArray\) but not a "
     r"cupy.ndarray; pass cupy.asarray\(arrays\[1\]\)"),
    (lambda cp: kernels.flatten([fake(cp, 4), fake(cp, 3, F64, ptr=B)], out=fake(cp, 7, ptr=OUT)),
     TypeError, F + r"arrays\[1\] has dtype float64, but arrays\[0\] has float32"),
    (lambda cp: kernels.flatten([fake(cp, 4), fake(cp, 100, ptr=BASE)[::2]]),
     ValueError, F + r"arrays\[1\] is not C-contiguous \(shape \(50,\)"),
    (lambda cp: kernels.flatten([fake(cp, 4), fake(cp, 3, ptr=B, device=1)]),
     ValueError, F + r"arrays\[1\] is on device 1, but arrays\[0\] is on device 0"),
    (lambda cp: kernels.flatten([fake(cp, 4)], out=fake(cp, 4, ptr=OUT, device=1)),
     ValueError, F + "out is on device 1, but the arrays are on device 0"),
    (lambda cp: kernels.flatten([fake(cp, 4), fake(cp, (2, 3), ptr=B)], out=fake(cp, 11, ptr=OUT)),
     ValueError, F + r"out has 11 elements \(shape \(11,\)\), need exactly 10"),
    (lambda cp: kernels.flatten([fake(cp, 4)], out=fake(cp, 4, F16, ptr=OUT)),
     TypeError, F + r"out has dtype float16, need float32 \(pass dtype= to cast\)"),
    (lambda cp: kernels.flatten([fake(cp, 4)], out=fake(cp, 8, ptr=OUT)[::2]),
     ValueError, F + "out is not C-contiguous"),
    (lambda cp: kernels.flatten([fake(cp, 100, ptr=BASE)[3:7]], out=fake(cp, 100, ptr=BASE)[:4]),
     ValueError, F + r"out overlaps arrays\[0\] in memory"),
    (lambda cp: kernels.flatten([fake(cp, 4, F64)], dtype=F16),
     TypeError, F + r"cannot cast the arrays \(float64\) to dtype float16; the casts served on "
     "the device are"),
    (lambda cp: kernels.flatten([fake(cp, 4, np.int32)], scale=2),
     TypeError, F + "scale needs float16, bfloat16, float32 or float64 data"),
    (lambda cp: kernels.flatten([fake(cp, 4)], scale="2"),
     TypeError, F + "scale must be an int or float, got str"),
    (lambda cp: kernels.unflatten(fake(cp, 10, ptr=OUT), [fake(cp, 4), np.empty(6, F32)]),
     TypeError, U + r"arrays\[1\] is a numpy.ndarray, but flat is a device array"),
    (lambda cp: kernels.unflatten(np.empty(4, F32), [fake(cp, 4)]),
     TypeError, U + r"arrays\[0\] is a device array \(cupy.ndarray\), but flat is a "
     "numpy.ndarray"),
    (lambda cp: kernels.unflatten(fake(cp, 9, ptr=OUT), [fake(cp, 4), fake(cp, (2, 3), ptr=B)]),
     ValueError, U + r"flat has 9 elements \(shape \(9,\)\), need exactly 10"),
    (lambda cp: kernels.unflatten(fake(cp, 8, ptr=OUT)[::2], [fake(cp, 4)]),
     ValueError, U + "flat is not C-contiguous"),
    (lambda cp: kernels.unflatten(fake(cp, 4, np.int64, ptr=OUT), [fake(cp, 4)]),
     TypeError, U + r"cannot cast flat \(int64\) to the arrays' dtype float32"),
    (lambda cp: kernels.unflatten(fake(cp, 100, ptr=BASE)[:4], [fake(cp, 100, ptr=BASE)[2:6]]),
     ValueError, U + r"flat overlaps arrays\[0\] in memory"),
]


@pytest.mark.parametrize("path", ["as built", "fallback"])
@pytest.mark.parametrize("call,exc,match", DEVICE_ERRORS)
def test_device_argument_errors_name_the_argument(call, exc, match, path, monkeypatch):
    """Real cupy.ndarray objects over memory that does not exist: each call fails its checks
    before any device work, so this runs with or without a GPU; the same with the CUDA kernels
    (as built) and with the CuPy fallback."""
    cp = pytest.importorskip("cupy")
    if path == "fallback":
        monkeypatch.setattr(device_path, "cuda_built", lambda: False)
    with pytest.raises(exc, match=match) as info:
        call(cp)
    assert type(info.value) is exc


def _gpu_count():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return 0


@pytest.mark.skipif(_gpu_count() > 0, reason="needs a machine without a usable GPU")
def test_valid_device_call_without_gpu_is_a_cuda_error():
    """CuPy arrays that pass every check, on a machine without a GPU: a RuntimeError from CUDA
    (CuPy's, or pycoll's own), not a crash."""
    cp = pytest.importorskip("cupy")
    with pytest.raises(RuntimeError, match=r"cuda|CUDA"):
        kernels.flatten([fake(cp, 4)], out=fake(cp, 4, ptr=OUT), scale=0.5)
    with pytest.raises(RuntimeError, match=r"cuda|CUDA"):
        kernels.unflatten(fake(cp, 4, ptr=OUT), [fake(cp, 4)])
    with pytest.raises(RuntimeError, match=r"cuda|CUDA"):
        kernels.flatten([fake(cp, 4)])  # allocating out


# --- the CUDA kernels on a GPU ---------------------------------------------------------------


@gpu
@pytest.mark.parametrize("name", PLAIN_DTYPES)
def test_plain_copy_every_dtype(cp, name):
    rng = np.random.default_rng(0)
    arrays = make_arrays(dt(name), SIZES, rng)
    dev = [cp.asarray(a) for a in arrays]
    flat = kernels.flatten(dev)
    assert isinstance(flat, cp.ndarray) and flat.ndim == 1 and flat.dtype == dt(name)
    assert_same(flat.get().view(np.uint8), ravel_all(arrays).view(np.uint8))
    if name != "bfloat16":  # CuPy's own copy agrees
        want = cp.concatenate([a.ravel() for a in dev])
        assert bool((flat.view(cp.uint8) == want.view(cp.uint8)).all())
    back = [cp.zeros_like(a) for a in dev]
    assert kernels.unflatten(flat, back) is None
    for b, a in zip(back, arrays):
        assert_same(b.get().view(np.uint8), a.view(np.uint8))


@gpu
@pytest.mark.parametrize("scale", SCALES, ids=repr)
@pytest.mark.parametrize("src,dst", CASTS)
def test_flatten_cast_and_scale(cp, src, dst, scale):
    src, dst = dt(src), dt(dst)
    rng = np.random.default_rng(3)
    arrays = make_arrays(src, SIZES, rng)
    got = kernels.flatten([cp.asarray(a) for a in arrays], scale=scale, dtype=dst)
    assert got.dtype == dst
    assert_same_values(got.get(), reference(ravel_all(arrays), src, dst, scale))


@gpu
@pytest.mark.parametrize("scale", SCALES, ids=repr)
@pytest.mark.parametrize("src,dst", CASTS)
def test_unflatten_cast_and_scale(cp, src, dst, scale):
    src, dst = dt(src), dt(dst)
    rng = np.random.default_rng(4)
    flat = random_data(src, sum(SIZES), rng)
    arrays = [cp.zeros((n,) if n % 2 else (n, 1), dtype=dst) for n in SIZES]
    kernels.unflatten(cp.asarray(flat).reshape(1, -1), arrays, scale=scale)
    assert_same_values(host(arrays), reference(flat, src, dst, scale))


@gpu
def test_float16_and_bfloat16_rounding_sweeps(cp):
    """Every sign, exponent and top float16 significand, with the interesting low bits, as the
    host test does; every float16 and bfloat16 back to float32."""
    high = np.arange(1 << 19, dtype=np.uint32) << 13
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF], dtype=np.uint32)
    x = (high[:, None] | low[None, :]).ravel().view(np.float32)
    assert_same(kernels.flatten([cp.asarray(x)], dtype=F16).get(), reference(x, F32, F16, None))
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    assert_same(kernels.flatten([cp.asarray(h)], dtype=F32).get(), reference(h, F16, F32, None))
    assert_same(kernels.flatten([cp.asarray(h)], scale=0.1).get(), reference(h, F16, F16, 0.1))
    if BF16 is not None:  # every bfloat16, with low bits below, at and above the tie
        low = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
        y = ((np.arange(1 << 16, dtype=np.uint32) << 16)[:, None] | low).ravel().view(np.float32)
        assert_same_values(kernels.flatten([cp.asarray(y)], dtype=BF16).get(),
                           reference(y, F32, BF16, None))
        b = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF16)
        assert_same(kernels.flatten([cp.asarray(b)], dtype=F32).get(),
                    reference(b, BF16, F32, None))


def _views(base, sizes, rng):
    """Views of `base` of the given sizes, in order, each starting 0-9 elements after the last one
    ended: every alignment against 16 bytes, no overlap."""
    views, at = [], 0
    for n in sizes:
        at += int(rng.integers(0, 10))
        views.append(base[at : at + n])
        at += n
    return views


@gpu
@pytest.mark.parametrize("scale", [None, 0.5])
@pytest.mark.parametrize("src,dst", CASTS)
def test_misaligned_views(cp, src, dst, scale):
    """Offset slices of bigger buffers, for the arrays and for the flat buffer: the 16-byte
    vectors meet every misalignment; nothing outside the views is written."""
    src, dst = dt(src), dt(dst)
    rng = np.random.default_rng(5)
    sizes = [1, 3, 7, 0, 1023, 1, 4097, 15, 16, 17, 5000, 2, 65536 + 3]
    total = sum(sizes)
    views = _views(cp.asarray(random_data(src, total + 10 * len(sizes), rng)), sizes, rng)
    for start in range(9):
        outbuf = cp.zeros(total + 16, dst)
        out = outbuf[start : start + total]
        kernels.flatten(views, out=out, scale=scale, dtype=dst)
        assert_same_values(out.get(), reference(host(views), src, dst, scale))
        out.view(cp.uint8)[...] = 0
        assert not bool(outbuf.view(cp.uint8).any())  # nothing written outside out

    flat_base = cp.asarray(random_data(src, total + 16, rng))
    for start in range(9):
        flat = flat_base[start : start + total]
        target = cp.zeros(total + 10 * len(sizes), dst)
        arrays = _views(target, sizes, np.random.default_rng(start))
        kernels.unflatten(flat, arrays, scale=scale)
        assert_same_values(host(arrays), reference(flat.get(), src, dst, scale))
        for a in arrays:
            a.view(cp.uint8)[...] = 0
        assert not bool(target.view(cp.uint8).any())  # nothing written outside the arrays


@gpu
def test_misaligned_bytes_at_every_offset(cp):
    """Byte copies (int8) from and to every offset mod 16, so that the source is shifted by every
    byte count into the destination's alignment."""
    rng = np.random.default_rng(6)
    data = cp.asarray(rng.integers(-128, 127, 200_000, dtype=np.int8))
    for src_off in range(16):
        sizes = [int(n) for n in rng.integers(0, 300, 20)] + [70_000 + src_off]
        starts = [src_off + 1000 * i for i in range(len(sizes) - 1)]
        views = [data[lo : lo + n] for lo, n in zip(starts, sizes)]
        views.append(data[100_000 + src_off : 100_000 + src_off + sizes[-1]])
        total = sum(sizes)
        for dst_off in range(16):
            outbuf = cp.zeros(total + 32, cp.int8)
            out = outbuf[dst_off : dst_off + total]
            kernels.flatten(views, out=out)
            assert bool((out == cp.concatenate(views)).all())
            assert not bool(outbuf[:dst_off].any()) and not bool(outbuf[dst_off + total :].any())
            back = [cp.zeros_like(v) for v in views]
            kernels.unflatten(out, back)
            assert all(bool((b == v).all()) for b, v in zip(back, views))


@gpu
def test_many_tiny_and_many_small_arrays(cp):
    rng = np.random.default_rng(7)
    tiny = make_arrays(F32, rng.integers(0, 5, size=5000), rng)
    dev = [cp.asarray(a) for a in tiny]
    assert_same(kernels.flatten(dev).get(), ravel_all(tiny))
    assert_same(kernels.flatten(dev, scale=0.25, dtype=F16).get(),
                reference(ravel_all(tiny), F32, F16, 0.25))
    back = [cp.empty_like(a) for a in dev]
    kernels.unflatten(cp.asarray(ravel_all(tiny)), back, scale=2.0)
    assert_same(host(back), reference(ravel_all(tiny), F32, F32, 2.0))

    small = [rng.standard_normal(int(n) // 4).astype(F32) for n in rng.integers(1024, 65537, 1000)]
    dev = [cp.asarray(a) for a in small]
    assert_same(kernels.flatten(dev).get(), ravel_all(small))
    back = [cp.empty_like(a) for a in dev]
    kernels.unflatten(kernels.flatten(dev, dtype=F16), back)
    assert_same(host(back), ravel_all(small).astype(F16).astype(F32))


@gpu
def test_large_arrays_span_many_tiles(cp):
    rng = np.random.default_rng(8)
    arrays = [random_data(F32, 3_000_001, rng), random_data(F32, 3, rng),
              random_data(F32, 1 << 20, rng)]
    dev = [cp.asarray(a) for a in arrays]
    assert_same(kernels.flatten(dev).get(), ravel_all(arrays))
    assert_same(kernels.flatten(dev, scale=1 / 7).get(),
                reference(ravel_all(arrays), F32, F32, 1 / 7))
    assert_same(kernels.flatten(dev, dtype=F16).get(), reference(ravel_all(arrays), F32, F16, None))


@gpu
def test_zero_size_arrays(cp):
    empty = [cp.empty((0, 3), F32), cp.empty(0, F32)]
    flat = kernels.flatten(empty, scale=2.0)
    assert flat.shape == (0,) and flat.dtype == F32
    kernels.unflatten(flat, empty)
    arrays = [cp.empty(0, F32), cp.arange(5, dtype=F32), cp.empty((0, 2), F32)]
    assert host([kernels.flatten(arrays)]).tolist() == [0, 1, 2, 3, 4]


@gpu
def test_tables_are_reused_and_replaced(cp):
    """The table built for a list is kept and reused while the list is unchanged (new contents
    are copied: only pointers and sizes are kept); other lists get their own; more lists than
    are kept evict the oldest, which is rebuilt when it comes back."""
    rng = np.random.default_rng(9)
    arrays = [cp.asarray(rng.standard_normal(n).astype(F32)) for n in (5, 1000, 3, 70_000)]
    out = cp.empty(sum(a.size for a in arrays), F32)

    def check(arrs, buf, **kw):
        kernels.flatten(arrs, out=buf, **kw)
        want = host(arrs) if not kw else reference(host(arrs), F32, F32, kw["scale"])
        assert_same(buf.get(), want)

    check(arrays, out)
    check(arrays, out)  # same table
    for a in arrays:
        a *= 3  # same pointers, new contents
    check(arrays, out)
    check(arrays, out, scale=0.5)  # same table, another scale
    check(arrays[::-1], out)  # same arrays, another order
    check(arrays[1:], out[: out.size - 5])  # another list
    lists = [[cp.asarray(rng.standard_normal(n).astype(F32)) for n in (i + 1, 2 * i + 7)]
             for i in range(12)]
    for lst in lists:  # more lists than are kept
        check(lst, cp.empty(sum(a.size for a in lst), F32))
    check(arrays, out)
    check(lists[0], cp.empty(sum(a.size for a in lists[0]), F32))


@gpu
def test_runs_on_the_current_stream(cp):
    """The kernel is enqueued on CuPy's current stream; a table uploaded on one stream is used
    on another."""
    rng = np.random.default_rng(10)
    arrays = [cp.asarray(rng.standard_normal(n).astype(F32)) for n in (4097, 1 << 20, 17)]
    want = host(arrays)
    out = cp.empty(want.size, F32)
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    with s1:
        kernels.flatten(arrays, out=out)  # builds the table on s1
    with s2:
        out2 = cp.empty(want.size, F16)
        kernels.flatten(arrays, out=out2, dtype=F16)  # another table, on s2
        kernels.flatten(arrays, out=out)  # s1's table, on s2
    s1.synchronize()
    s2.synchronize()
    assert_same(out.get(), want)
    assert_same(out2.get(), want.astype(F16))
    with s1:
        back = [cp.empty_like(a) for a in arrays]
        kernels.unflatten(out, back, scale=2.0)
        s1.synchronize()
    assert_same(host(back), want * np.float32(2))


# Not marked gpu: `pytest -m gpu` runs on one-GPU machines, where a gpu test that skips counts
# as failing (issue 19); this one runs wherever two GPUs are visible.
@pytest.mark.skipif(_gpu_count() < 2, reason="needs two GPUs")
def test_arrays_on_another_device(cp):
    with cp.cuda.Device(1):
        arrays = [cp.arange(n, dtype=F32) for n in (3, 1000)]
    flat = kernels.flatten(arrays, scale=2.0)  # current device 0
    assert flat.device.id == 1
    assert_same(host([flat]), host(arrays) * np.float32(2))


@gpu
@pytest.mark.parametrize("src,dst", CASTS)
def test_fallback_gives_the_same_results(cp, src, dst, monkeypatch, caplog):
    """A build without CUDA kernels copies with CuPy, array by array, and warns once; its
    results are the kernels' (and NumPy's), but for float32 subnormals, which CuPy flushes."""
    src, dst = dt(src), dt(dst)
    rng = np.random.default_rng(11)
    arrays = make_arrays(src, SIZES, rng)
    dev = [cp.asarray(a) for a in arrays]
    flat_h = random_data(src, sum(SIZES), rng)
    results = {}
    for path in ("cuda", "fallback"):
        if path == "fallback":
            monkeypatch.setattr(device_path, "cuda_built", lambda: False)
            monkeypatch.setattr(device_path, "_fallback_warned", False)
        elif not kernels.build_info()["cuda_kernels"]:
            continue
        caplog.clear()
        got = []
        for scale in (None, 1 / 3, 1e30):
            got.append(kernels.flatten(dev, scale=scale, dtype=dst).get())
            back = [cp.zeros(a.shape, dst) for a in arrays]
            kernels.unflatten(cp.asarray(flat_h), back, scale=scale)
            got.append(host(back))
        results[path] = got
        warnings = [r for r in caplog.records
                    if r.name == "pycoll" and "no CUDA kernels" in r.message]
        assert len(warnings) == (1 if path == "fallback" else 0)
    flat_in = ravel_all(arrays)
    for i, scale in enumerate((None, 1 / 3, 1e30)):
        want_flat = reference(flat_in, src, dst, scale)
        want_back = reference(flat_h, src, dst, scale)
        for path, got in results.items():
            if path == "cuda" or not {"float32", "bfloat16"} & {src.name, dst.name}:
                assert_same_values(got[2 * i], want_flat)
                assert_same_values(got[2 * i + 1], want_back)
            else:
                assert_same_but_flushed(got[2 * i], want_flat, flat_in)
                assert_same_but_flushed(got[2 * i + 1], want_back, flat_h)


def assert_same_but_flushed(got, want, source):
    """The fallback's answer where float32 arithmetic is involved: CuPy compiles its kernels with
    -ftz=true (cupy/cupy#8382), so float32 (and bfloat16, computed in float32) subnormals, read or
    made, become zeros of the same sign; every other element is exact."""
    tiny = np.finfo(F32).tiny
    with np.errstate(invalid="ignore"):  # bfloat16 NaNs widen with a warning
        g, w, x = (a.astype(F64) for a in (got, want, source))
        may_flush = ((w != 0) & (np.abs(w) < tiny)) | ((x != 0) & (np.abs(x) < tiny))
    flushed = may_flush & (g == 0) & (np.signbit(g) == np.signbit(w))
    assert_same_values(got[~flushed], want[~flushed])
