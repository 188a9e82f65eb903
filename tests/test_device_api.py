"""paddle.device / paddle.device.cuda: streams, events, memory statistics, device properties,
generator controls and the typed tensor factories.

Three settings: no CuPy at all (what paddle's CPU build does, values and errors measured on paddle
3.3.1's CPU build); the CuPy stand-in of host_cuda.py as ``import cupy`` and as the NCCL engine's
CuPy (one "GPU": which stream each call lands on, the memory pool's bookkeeping); and, marked
``gpu``, real CuPy on a GPU.
"""
import sys
import time

import numpy as np
import pytest

import pycoll
from host_cuda import CURRENT
from pycoll import device
from pycoll.backends.reduce_op import ReduceOp
from pycoll.device import cuda, memory_stats

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:cupy._environment")


@pytest.fixture
def no_cupy(monkeypatch):
    """No CuPy importable: pycoll sees no GPU, as paddle's CPU build has none."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr(device, "_current", ("cpu", 0))


@pytest.fixture
def gpu(fake, monkeypatch):
    """host_cuda's stand-in as ``import cupy`` and as the engine's CuPy (``fake``), one GPU; the
    current place and the memory peaks as they were after the test."""
    monkeypatch.setitem(sys.modules, "cupy", fake.xp)
    monkeypatch.setitem(sys.modules, "cupy.cuda", fake.xp.cuda)
    monkeypatch.setattr(fake.xp, "__version__", "14.2.0", raising=False)  # a pool that counts its bytes
    monkeypatch.setattr(device, "_current", ("cpu", 0))
    monkeypatch.setattr(memory_stats, "_peaks", {})
    monkeypatch.setattr(memory_stats, "_tracking", False)
    return fake


# -- without a GPU: paddle 3.3.1's CPU build --------------------------------------------------
def test_what_a_cpu_build_answers(no_cupy):
    # each value as paddle 3.3.1's CPU build returns it
    assert device.device_count() == 0 and cuda.device_count() == 0
    assert device.get_all_device_type() == [] and device.get_available_device() == []
    assert device.get_all_custom_device_type() == [] and device.get_available_custom_device() == []
    assert device.is_available() is False
    assert device.is_compiled_with_cinn() is False and device.is_compiled_with_distribute() is True
    assert device.is_compiled_with_ipu() is False and device.is_compiled_with_xpu() is False
    assert device.is_compiled_with_rocm() is False and device.is_compiled_with_custom_device("npu") is False
    assert device.get_cudnn_version() is None and device.is_current_stream_capturing() is False
    assert device.is_bf16_supported() is True and device.is_bf16_supported(False) is True
    assert cuda.empty_cache() is None
    with device.stream_guard(None):  # None changes nothing, on any build
        assert device.get_device() == "cpu"
    assert device.StreamContext is device.stream_guard


@pytest.mark.parametrize("call, error", [
    # the exception paddle 3.3.1's CPU build raises for each
    (lambda: device.max_memory_allocated(), ValueError),
    (lambda: device.max_memory_reserved(), ValueError),
    (lambda: device.reset_max_memory_allocated(), ValueError),
    (lambda: device.reset_max_memory_reserved(), ValueError),
    (lambda: device.reset_peak_memory_stats(), ValueError),
    (lambda: cuda.memory_allocated(), ValueError),
    (lambda: cuda.memory_reserved(), ValueError),
    (lambda: cuda.max_memory_allocated(0), ValueError),
    (lambda: cuda.get_device_properties(), ValueError),
    (lambda: cuda.get_device_name(0), ValueError),
    (lambda: cuda.get_device_capability(), ValueError),
    (lambda: cuda.Stream(), RuntimeError),
    (lambda: cuda.Event(), RuntimeError),
    (lambda: cuda.create_stream(), RuntimeError),
    (lambda: cuda.create_event(), RuntimeError),
    (lambda: device.current_stream(), TypeError),
    (lambda: device.ipc_collect(), RuntimeError),
    (lambda: device.XPUPlace(0), ValueError),
    (lambda: device.IPUPlace(), ValueError),
    (lambda: device.device_guard("gpu"), ValueError),
    (lambda: device.device_guard(3), ValueError),
    (lambda: device.is_compiled_with_custom_device(1), TypeError),
    (lambda: device.stream_guard("s"), TypeError),
])
def test_what_a_cpu_build_refuses(no_cupy, call, error):
    with pytest.raises(error):
        call()


def test_device_guard_switches_the_device_and_back(no_cupy):
    with device.device_guard(pycoll.CPUPlace()):
        assert device.get_device() == "cpu"
    guard = device.device_guard("cpu")
    with guard:
        assert pycoll.zeros([1]).place == "cpu"
    assert device.get_device() == "cpu"


# -- the generator controls -------------------------------------------------------------------
def test_manual_seed_is_pycolls_seed_and_the_state_round_trips():
    pycoll.seed(7)
    expected = pycoll.rand([4]).numpy()
    device.manual_seed("7")  # paddle's int(seed): '7' is 7
    assert np.array_equal(pycoll.rand([4]).numpy(), expected)
    cuda.manual_seed(7.0)
    assert np.array_equal(pycoll.rand([4]).numpy(), expected)
    state = device.get_rng_state()
    drawn = pycoll.rand([5]).numpy()
    device.set_rng_state(state)
    assert np.array_equal(pycoll.rand([5]).numpy(), drawn)
    cuda.set_rng_state(cuda.get_rng_state("cpu"), "cpu")
    assert not np.array_equal(pycoll.rand([5]).numpy(), drawn)  # the state now, not the old one


def test_generator_controls_check_their_arguments(no_cupy):
    assert device.get_rng_state(0) == device.get_rng_state()  # index 0 is the CPU, as in paddle
    with pytest.raises(ValueError, match="must be 0"):
        cuda.get_rng_state(1)  # paddle: "CPU device only supports index 0, got 1"
    with pytest.raises(ValueError, match="CUDA GPU"):
        device.get_rng_state("gpu:0")
    with pytest.raises(TypeError, match="new_state"):
        device.set_rng_state(None)
    with pytest.raises(ValueError):
        device.manual_seed("a")


# -- the typed tensor factories ---------------------------------------------------------------
def test_typed_tensor_factories_as_paddles():
    # shapes, dtypes and values as paddle 3.3.1 makes them
    empty = device.FloatTensor()
    assert empty.shape == [0] and empty.dtype == pycoll.float32
    assert device.FloatTensor((1, 2)).numpy().tolist() == [1.0, 2.0]
    assert device.LongTensor([1.7, 2]).numpy().tolist() == [1, 2]
    assert pycoll.LongTensor is device.LongTensor and pycoll.FloatTensor(2, 3).dtype == pycoll.float32  # paddle.FloatTensor too
    made = device.FloatTensor(2, 3)
    assert made.shape == [2, 3] and made.dtype == pycoll.float32
    assert device.IntTensor(4).dtype == pycoll.int32 and device.IntTensor(4).shape == [4]
    assert device.BoolTensor([0, 2]).numpy().tolist() == [False, True]
    assert device.FloatTensor([[1], [2]]).shape == [2, 1]
    for factory, dtype in ((device.DoubleTensor, "float64"), (device.HalfTensor, "float16"),
                           (device.BFloat16Tensor, "bfloat16"), (device.ByteTensor, "uint8"),
                           (device.CharTensor, "int8"), (device.ShortTensor, "int16")):
        assert str(factory([1]).dtype).endswith(dtype)
    assert not isinstance(device.FloatTensor([1.0]), device.FloatTensor)  # factories, not types
    with pytest.raises(AttributeError):
        device.NoSuchTensor


# -- streams and events, on the CuPy stand-in -------------------------------------------------
def test_streams_are_cupy_streams_with_paddles_priorities(gpu):
    high, low = device.Stream(priority=1), cuda.Stream("gpu:0")
    assert high.stream_base.priority == -1000 and low.stream_base.priority == 0  # CUDA clamps -1000
    assert high.cuda_stream != low.cuda_stream and high.__cuda_stream__() == (0, high.cuda_stream)
    assert high.device == pycoll.CUDAPlace(0) and high.place == "gpu:0"
    assert high != low and high == device.Stream(stream_base=high.stream_base)
    assert len({high, low, device.Stream(stream_base=low.stream_base)}) == 2
    assert cuda.create_stream(0, -1).stream_base.priority == -1000
    with pytest.raises(ValueError, match="priority"):
        device.Stream(priority=5)
    with pytest.raises(ValueError, match="visible GPUs"):
        device.Stream("gpu:1")
    with pytest.raises(RuntimeError, match="GPU"):
        device.Stream("cpu")


def test_set_stream_and_stream_guard_move_cupys_current_stream(gpu):
    from pycoll.backends import cuda_api

    assert device.current_stream().cuda_stream == CURRENT
    side = device.Stream()
    previous = device.set_stream(side)
    assert previous.cuda_stream == CURRENT
    assert cuda_api.cuda().current_stream().ptr == side.cuda_stream == device.current_stream().cuda_stream
    device.set_stream(previous)
    assert cuda_api.cuda().current_stream().ptr == CURRENT
    with device.stream_guard(side):
        assert device.get_device() == "gpu:0"  # the stream's GPU is the current device inside
        assert device.current_stream(0) == side
    assert device.get_device() == "cpu" and device.current_stream().cuda_stream == CURRENT


def test_a_collective_inside_stream_guard_runs_on_that_stream(gpu, backend):
    side = device.Stream()
    gpu.clear()
    with device.stream(side):
        arr = gpu.xp.zeros(4, np.float32)
        backend.all_reduce(arr, backend.plan(np.dtype(np.float32), ReduceOp.SUM), True)
    assert gpu.log.calls("allReduce") == [("allReduce", arr.data.ptr, arr.data.ptr, 4, 7, 0, side.cuda_stream)]
    assert gpu.log.calls("record") == [("record", side.cuda_stream)]


def test_events_record_query_wait_and_time(gpu):
    side, event = device.Stream(), device.Event()
    gpu.clear()
    event.record()  # on the current stream
    side.wait_event(event)
    assert gpu.log == [("record", CURRENT), ("wait", side.cuda_stream, CURRENT)]
    assert event.query() is False
    gpu.done = True
    assert event.query() is True and side.query() is True
    gpu.clear()
    other = device.Stream()
    side.wait_stream(other)
    assert gpu.log == [("record", other.cuda_stream), ("wait", side.cuda_stream, other.cuda_stream)]
    start, end = cuda.Event(enable_timing=True), cuda.create_event(enable_timing=True)
    start.record(side)
    time.sleep(0.02)
    side.record_event(end)
    assert 20 <= start.elapsed_time(end) < 2000  # milliseconds, host clock in the stand-in
    with pytest.raises(ValueError, match="enable_timing"):
        event.elapsed_time(end)
    with pytest.raises(ValueError, match="interprocess"):
        device.Event(enable_timing=True, interprocess=True)
    with pytest.raises(TypeError, match="stream"):
        event.record("s")


# -- memory statistics, on the stand-in's pool ------------------------------------------------
def test_memory_peaks_catch_what_happens_between_queries(gpu):
    alloc = gpu.xp.cuda.alloc
    dropped = alloc(1 << 20)
    del dropped  # before any statistic was asked for: a GPU program's allocations are not watched
    device.empty_cache()
    device.set_device("gpu:0")
    assert device.max_memory_allocated() == 0  # the first query starts keeping the peaks
    a, b = alloc(3000), alloc(1000)  # blocks of 3072 and 1024 bytes
    del a  # its block stays cached in the pool
    c = alloc(200)  # 512: a new block
    assert device.memory_allocated() == 1024 + 512 and cuda.memory_reserved("gpu:0") == 3072 + 1024 + 512
    assert device.max_memory_allocated() == 3072 + 1024  # before a was dropped, never asked for then
    del b, c
    transient = alloc(8000)
    del transient
    assert cuda.memory_allocated() == 0 and cuda.max_memory_allocated() == 8192
    assert cuda.max_memory_reserved("cuda:0") == 3072 + 1024 + 512 + 8192
    device.empty_cache()
    assert cuda.memory_reserved() == 0 and cuda.max_memory_reserved() == 12800
    cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == 0 and cuda.max_memory_reserved() == 12800
    kept = alloc(512)
    device.reset_peak_memory_stats()
    assert (cuda.max_memory_allocated(), cuda.max_memory_reserved()) == (512, 512)
    del kept
    cuda.reset_max_memory_reserved(0)
    assert cuda.max_memory_reserved() == 512  # the block stays in the pool
    with pytest.raises(ValueError, match="visible GPUs"):
        cuda.memory_allocated(1)
    with pytest.raises(ValueError, match="GPU"):
        cuda.memory_allocated("cpu")


@pytest.mark.parametrize("users_allocator, version", [(True, "14.2.0"), (False, "13.6.0")])
def test_with_the_users_own_allocator_or_an_older_cupy_peaks_are_sampled(gpu, monkeypatch, users_allocator,
                                                                       version):
    monkeypatch.setattr(gpu.xp, "__version__", version)
    if users_allocator:
        gpu.xp.cuda.set_allocator(lambda size: gpu.pool.malloc(size))  # not the pool's own malloc
    assert cuda.memory_allocated() == 0
    block = gpu.xp.cuda.alloc(4096)
    del block
    assert cuda.max_memory_allocated() == 0  # unseen: pycoll left the allocator alone
    kept = gpu.xp.cuda.alloc(4096)
    assert cuda.max_memory_allocated() == 4096  # seen when asked
    del kept


def test_memory_summary_prints_the_figures(gpu, capsys):
    kept = gpu.xp.cuda.alloc(3 << 20)
    cuda.memory_summary()
    text = capsys.readouterr().out
    assert "gpu:0" in text and "max allocated" in text and "3.0 MiB" in text and "4096.0 MiB" in text
    del kept


# -- device facts, on the stand-in --------------------------------------------------------------
def test_properties_come_from_cupys_runtime(gpu):
    props = cuda.get_device_properties()
    assert (props.name, props.major, props.minor, props.multi_processor_count) == \
        ("host memory (host_cuda)", 9, 0, 132)
    assert repr(props) == ("_gpuDeviceProperties(name='host memory (host_cuda)', major=9, minor=0, "
                           "total_memory=0MB, multi_processor_count=132)")  # paddle's text
    assert device.get_device_name("gpu:0") == "host memory (host_cuda)"
    assert device.get_device_capability(pycoll.CUDAPlace(0)) == (9, 0)
    assert device.get_all_device_type() == ["gpu"] and device.get_available_device() == ["gpu:0"]
    assert device.is_available() is True and device.device_count() == 1
    device.ipc_collect()  # nothing to collect, and no refusal, with a GPU
    with device.device_guard("gpu:0"):
        assert device.get_device() == "gpu:0" and device.is_bf16_supported(False) is True
    assert device.get_device() == "cpu"


# -- real CuPy -----------------------------------------------------------------------------------
@pytest.mark.gpu
def test_on_a_gpu_streams_events_and_memory_are_cupys(monkeypatch):
    import cupy

    monkeypatch.setattr(device, "_current", None)  # back to the test session's place after
    device.set_device("gpu:0")
    side = device.Stream()
    with device.stream_guard(side):
        assert cupy.cuda.get_current_stream().ptr == side.cuda_stream
        start, end = device.Event(enable_timing=True), device.Event(enable_timing=True)
        start.record()
        x = cupy.ones((4096, 4096), cupy.float32)
        y = x @ x
        end.record()
    end.synchronize()
    assert start.query() and end.query() and start.elapsed_time(end) > 0
    assert float(y[0, 0]) == 4096.0
    assert cupy.cuda.get_current_stream().ptr != side.cuda_stream
    device.reset_peak_memory_stats()
    base = device.memory_allocated()
    z = cupy.empty(64 << 20, cupy.uint8)
    del z
    assert device.max_memory_allocated() >= base + (64 << 20) > device.memory_allocated()
    assert device.get_device_name() == cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    assert device.get_device_capability() == divmod(int(cupy.cuda.Device(0).compute_capability), 10)
