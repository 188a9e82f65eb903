"""paddle 3.3.1's remaining top-level names: async_save, the device names (Stream, Event,
set_default_device, get_device_module, ...), the is_compiled_with_* questions, pycoll.cuda,
pycoll.special, sysconfig, hub, onnx and the place classes.

Where a test says "paddle's CPU build", the answer was measured on paddle 3.3.1's CPU build
(paddlepaddle 3.3.1, CPU wheel) with the same call and written in here.
"""
import numpy as np
import pytest

import pycoll
import pycoll.framework


def test_async_save_is_the_framework_one_and_saves(tmp_path):
    assert pycoll.async_save is pycoll.framework.async_save
    assert pycoll.clear_async_save_task_queue is pycoll.framework.clear_async_save_task_queue
    path = str(tmp_path / "state.pdparams")
    pycoll.async_save({"w": pycoll.to_tensor([1.0, 2.0, 3.0])}, path)
    pycoll.clear_async_save_task_queue()  # waits for the save
    np.testing.assert_array_equal(pycoll.load(path)["w"].numpy(), [1.0, 2.0, 3.0])


def test_device_names_at_the_top_are_pycoll_devices():
    import pycoll.device as device

    for name in ("Stream", "Event", "set_default_device", "get_device_module", "get_cudnn_version",
                 "device_guard"):
        assert getattr(pycoll, name) is getattr(device, name), name
    assert pycoll.get_cudnn_version() is None  # paddle's CPU build: None


@pytest.mark.skipif(pycoll.device.gpu_count() > 0, reason="the CPU-only answers")
def test_device_answers_of_paddles_cpu_build():
    import pycoll.device as device
    import pycoll.device.cpu as cpu

    # paddle's CPU build: get_device_module() / ('cpu') / (0) -> paddle.device.cpu,
    # (CPUPlace()) -> paddle.device, ('xpu') its xpu module (pycoll has none), ('foo') RuntimeError
    assert pycoll.get_device_module() is cpu
    assert pycoll.get_device_module("cpu") is cpu and pycoll.get_device_module(0) is cpu
    assert pycoll.get_device_module(pycoll.CPUPlace()) is device
    with pytest.raises(RuntimeError, match="Unsupported device type: foo"):
        pycoll.get_device_module("foo")
    with pytest.raises(RuntimeError, match="xpu"):
        pycoll.get_device_module("xpu")
    # set_default_device('cpu' / 0 / CPUPlace()) -> None; (1) ValueError (CPU index 0 only); ('gpu') ValueError
    for arg in ("cpu", 0, pycoll.CPUPlace()):
        assert pycoll.set_default_device(arg) is None and pycoll.get_device() == "cpu"
    with pytest.raises(ValueError, match="only index is 0"):
        pycoll.set_default_device(1)
    with pytest.raises(ValueError):
        pycoll.set_default_device("gpu")
    with pytest.raises(TypeError, match="device must be"):
        pycoll.set_default_device(1.5)
    assert device.current_device() == 0  # paddle's: 0
    with device.device("cpu"):
        assert pycoll.get_device() == "cpu"
    with pytest.raises(ValueError):  # paddle's CPU build: device_guard('gpu') ValueError
        pycoll.device_guard("gpu")
    # paddle's Stream() / Event() fail on its CPU build (a NameError inside paddle); pycoll's say why
    for make in (pycoll.Stream, pycoll.Event, cpu.Stream, lambda: device.get_stream_from_external(0)):
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            make()
    # paddle.device.cpu: device_count() 0, max_memory_allocated() ValueError 'not supported in CPU'
    assert cpu.device_count() == 0
    with pytest.raises(ValueError, match="not supported on the CPU"):
        cpu.max_memory_allocated()
    assert cpu.get_rng_state is device.get_rng_state


def test_manual_seed_all_reseeds_the_generator():
    import pycoll.device as device

    device.manual_seed_all(7)
    first = pycoll.rand([3]).numpy()
    pycoll.seed(7)
    np.testing.assert_array_equal(pycoll.rand([3]).numpy(), first)


def test_is_compiled_with_answers():
    # paddle's CPU build: distribute True, xpu/rocm/ipu/cinn False, custom_device('npu') False,
    # custom_device(1) TypeError; pycoll always has its collectives and runs on no XPU/IPU/custom device
    assert pycoll.is_compiled_with_distribute() is True
    for name in ("xpu", "ipu", "cinn"):
        assert getattr(pycoll, f"is_compiled_with_{name}")() is False
    assert pycoll.is_compiled_with_custom_device("npu") is False
    with pytest.raises(TypeError, match="device_type"):
        pycoll.is_compiled_with_custom_device(1)
    if not pycoll.is_compiled_with_cuda():  # ROCm: a GPU seen through CuPy's HIP build
        assert pycoll.is_compiled_with_rocm() is False


def test_cuda_is_a_face_over_pycoll_device():
    import pycoll.cuda as cuda
    import pycoll.device as device

    assert pycoll.cuda is cuda
    for name in ("Stream", "Event", "StreamContext", "current_stream", "set_stream", "stream", "device_count",
                 "empty_cache", "memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
                 "get_device_name", "get_device_properties", "get_device_capability", "is_available",
                 "is_bf16_supported", "current_device", "device", "manual_seed_all", "manual_seed",
                 "get_rng_state", "set_rng_state", "ipc_collect", "get_stream_from_external", "FloatTensor",
                 "LongTensor"):
        assert getattr(cuda, name) is getattr(device, name), name
    assert cuda.synchronize is device.cuda.synchronize
    assert set(cuda.__all__) <= set(dir(cuda))
    assert pycoll.get_device_module("gpu:0") is cuda and pycoll.get_device_module("cuda") is cuda


@pytest.mark.skipif(pycoll.device.gpu_count() > 0, reason="the CPU-only answers")
def test_cuda_answers_of_paddles_cpu_build():
    import pycoll.cuda as cuda

    # paddle.cuda on paddle 3.3.1's CPU build: device_count() 0, is_available() False,
    # current_device() 0, is_initialized() False, is_bf16_supported() True,
    # is_current_stream_capturing() False, set_device('cpu') None, set_device(0) ValueError
    # ('Paddle-CPU is not supported'), set_device(1.5) ValueError ('Unsupported device type'),
    # mem_get_info() ValueError ('Expected a cuda device, but got: Place(cpu)'),
    # current_stream() TypeError, max_memory_allocated() ValueError, ipc_collect() RuntimeError,
    # FloatTensor([1, 2]) a float32 tensor [1., 2.], stream(None) a guard that changes nothing
    assert cuda.device_count() == 0 and cuda.is_available() is False
    assert cuda.current_device() == 0 and cuda.is_initialized() is False
    assert cuda.is_bf16_supported() is True and cuda.is_current_stream_capturing() is False
    assert cuda.set_device("cpu") is None
    with pytest.raises(ValueError, match="current device is the CPU"):
        cuda.set_device(0)
    with pytest.raises(ValueError, match="Unsupported device type"):
        cuda.set_device(1.5)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: Place\\(cpu\\)"):
        cuda.mem_get_info()
    with pytest.raises(TypeError):
        cuda.current_stream()
    with pytest.raises(ValueError):
        cuda.max_memory_allocated()
    with pytest.raises(RuntimeError):
        cuda.ipc_collect()
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        cuda.cudart()
    x = cuda.FloatTensor([1, 2])
    assert x.dtype == pycoll.float32 and x.numpy().tolist() == [1.0, 2.0]
    with cuda.stream(None):
        assert pycoll.get_device() == "cpu"
    with cuda.device("cpu"):
        assert pycoll.get_device() == "cpu"


def test_cuda_error_codes():
    import pycoll.cuda as cuda

    assert cuda.check_error(0) is None  # cudaSuccess
    with pytest.raises(cuda.CudaError, match=r"^out of memory \(2\)$"):  # CUDA's text for code 2
        cuda.check_error(2)
    assert isinstance(cuda.CudaError(1), RuntimeError) and cuda.CudaError(1).code == 1
    with pytest.raises(TypeError, match="res must be an int"):
        cuda.check_error("0")


def test_cuda_manual_seed_all_and_rng_state():
    import pycoll.cuda as cuda

    state = cuda.get_rng_state()
    first = pycoll.rand([4]).numpy()
    cuda.set_rng_state(state)
    np.testing.assert_array_equal(pycoll.rand([4]).numpy(), first)


@pytest.mark.gpu
@pytest.mark.skipif(pycoll.device.gpu_count() == 0, reason="needs a GPU")
def test_cuda_on_a_gpu():
    import cupy

    import pycoll.cuda as cuda

    pycoll.set_device("gpu:0")
    assert cuda.set_device(0) is None and pycoll.get_device() == "gpu:0"  # an int is a GPU index here
    free, total = cuda.mem_get_info(0)
    assert 0 < free <= total == cupy.cuda.runtime.getDeviceProperties(0)["totalGlobalMem"]
    assert cuda.cudart() is cupy.cuda.runtime and cuda.is_initialized() is True
    assert cuda.current_device() == 0
    external = cupy.cuda.Stream(non_blocking=True)
    wrapped = cuda.get_stream_from_external(external.ptr, 0)
    assert wrapped.cuda_stream == external.ptr
    with cuda.stream(wrapped):
        y = pycoll.ones([8]) * 2
    wrapped.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(8, 2.0, np.float32))
    cuda.nvtx.range_push("pycoll")
    cuda.nvtx.range_pop()
    with cuda.device(0):
        assert pycoll.get_device() == "gpu:0"


def test_special_functions_give_paddles_values():
    import pycoll.special as special

    assert pycoll.special is special and special.softmax is pycoll.softmax  # paddle.softmax is special.softmax
    x = pycoll.to_tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    # paddle 3.3.1's CPU build, same x (float32; the dtype='float64' row computed in float64)
    np.testing.assert_allclose(special.softmax(x, 0).numpy(), [[0.622459352016449, 0.9525741338729858,
                                                                0.7310585975646973], [0.3775406777858734,
                                                                0.04742587357759476, 0.2689414322376251]],
                               rtol=1e-6)
    np.testing.assert_allclose(special.softmax(x, dim=1, dtype="float64").numpy(),
                               [[0.09003057317038045, 0.2447284710547976, 0.6652409557748218],
                                [0.1752903921400367, 0.039112573270687456, 0.7855970345892759]], rtol=1e-12)
    np.testing.assert_allclose(special.softmax(x).numpy(), special.softmax(x, dim=1).numpy(), rtol=1e-7)
    np.testing.assert_allclose(special.logsumexp(x, 1).numpy(), [3.4076058864593506, 2.2413113117218018], rtol=1e-6)
    np.testing.assert_allclose(special.logsumexp(x).numpy(), 3.6787919998168945, rtol=1e-6)
    np.testing.assert_allclose(special.expm1(x).numpy(), [[1.7182817459106445, 6.389056205749512, 19.08553695678711],
                                                          [0.6487212777137756, -0.6321205496788025,
                                                           6.389056205749512]], rtol=1e-6)


def test_sysconfig_points_at_the_headers_and_the_library():
    import importlib.util
    import os

    include, lib = pycoll.sysconfig.get_include(), pycoll.sysconfig.get_lib()
    package = os.path.dirname(pycoll.__file__)
    csrc = os.path.join(os.path.dirname(package), "csrc")
    if os.path.isdir(csrc):  # a source (editable) install: the headers are there
        assert os.path.samefile(include, csrc) and os.path.isfile(os.path.join(include, "host_kernels.h"))
    else:  # a wheel ships no headers: paddle's layout
        assert include == os.path.join(package, "include")
    spec = importlib.util.find_spec("pycoll._C")
    assert spec is not None and os.path.dirname(spec.origin) == lib
    assert any(name.startswith("_C.") for name in os.listdir(lib))


HUBCONF = '''
dependencies = ["numpy"]
from helper_mod import width_of


def tiny_linear(out_features=3):
    """A tiny Linear (4 -> out_features)."""
    import pycoll
    return pycoll.nn.Linear(width_of(2), out_features)


def _private():
    pass
'''


@pytest.fixture
def hub_repo(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    (tmp_path / "helper_mod.py").write_text("def width_of(n):\n    return n * 2\n")
    return str(tmp_path)


def test_hub_reads_a_local_hubconf(hub_repo):
    import sys

    # paddle 3.3.1's hub.list on this hubconf (paddle in place of pycoll, its helper named scale_of):
    # ['scale_of', 'tiny_linear'], the public callables, the imported helper included; help: the docstring
    assert pycoll.hub.list(hub_repo, source="local") == ["tiny_linear", "width_of"]
    assert pycoll.hub.help(hub_repo, "tiny_linear", source="local") == "A tiny Linear (4 -> out_features)."
    layer = pycoll.hub.load(hub_repo, "tiny_linear", source="local", out_features=5)
    assert isinstance(layer, pycoll.nn.Linear) and list(layer.weight.shape) == [4, 5]
    assert hub_repo not in sys.path  # the folder is on the path only while hubconf runs


def test_hub_refusals(hub_repo, tmp_path):
    # paddle's texts: unknown source ValueError, non-str model ValueError, missing entry RuntimeError
    with pytest.raises(ValueError, match='Unknown source: "x"'):
        pycoll.hub.list(hub_repo, source="x")
    with pytest.raises(ValueError, match="model should be a str"):
        pycoll.hub.help(hub_repo, 1, source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable nothing in hubconf"):
        pycoll.hub.load(hub_repo, "nothing", source="local")
    with pytest.raises(RuntimeError, match="downloads nothing"):
        pycoll.hub.list("PaddlePaddle/PaddleClas:develop")  # source='github', paddle's default
    with pytest.raises(RuntimeError, match="hubconf.py"):
        pycoll.hub.list(str(tmp_path / "nowhere"), source="local")
    (tmp_path / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "no_such_module_xyz"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        pycoll.hub.load(str(tmp_path), "tiny_linear", source="local")
    (tmp_path / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["paddle", "paddle.nn"]'))  # paddle's are ours
    assert isinstance(pycoll.hub.load(str(tmp_path), "tiny_linear", source="local"), pycoll.nn.Linear)


def test_hub_load_state_dict_from_a_present_file(tmp_path):
    pycoll.save({"w": pycoll.to_tensor([1.0, 2.0])}, str(tmp_path / "weights.pdparams"))
    url = "https://example.com/models/weights.pdparams"
    state = pycoll.hub.load_state_dict_from_url(url, model_dir=str(tmp_path))
    np.testing.assert_array_equal(state["w"].numpy(), [1.0, 2.0])
    as_numpy = pycoll.hub.load_state_dict_from_url(url, model_dir=str(tmp_path), map_location="np")
    assert isinstance(as_numpy["w"], np.ndarray)
    with pytest.raises(RuntimeError, match="downloads nothing"):
        pycoll.hub.load_state_dict_from_url(url, model_dir=str(tmp_path), file_name="absent.pdparams")


def test_onnx_export_says_paddle2onnx_is_missing():
    import importlib.util

    if importlib.util.find_spec("paddle2onnx") is not None:
        with pytest.raises(NotImplementedError, match="no static program|none to give"):
            pycoll.onnx.export(pycoll.nn.Linear(2, 2), "model")
        return
    # paddle 3.3.1's CPU build without paddle2onnx raises this ImportError text
    with pytest.raises(ImportError) as info:
        pycoll.onnx.export(pycoll.nn.Linear(2, 2), "model")
    assert str(info.value) == ("Failed importing paddle2onnx. This likely means that some paddle modules require "
                               "additional dependencies that have to be manually installed (usually with "
                               "`pip install paddle2onnx`). ")


def test_other_place_classes_are_refused_as_paddles_cpu_build_refuses_them():
    import pycoll.device as device
    from pycoll.device.places import Place

    # paddle 3.3.1's CPU build: XPUPlace(0), IPUPlace(), CustomPlace('npu', 0) ValueError,
    # XPUPinnedPlace() and CUDAPinnedPlace() RuntimeError, CustomPlace() / XPUPlace() TypeError
    for make, error in ((lambda: pycoll.XPUPlace(0), ValueError), (pycoll.IPUPlace, ValueError),
                        (lambda: pycoll.CustomPlace("npu", 0), ValueError), (pycoll.XPUPinnedPlace, RuntimeError),
                        (pycoll.CustomPlace, TypeError), (pycoll.XPUPlace, TypeError),
                        (lambda: pycoll.XPUPlace("0"), TypeError), (lambda: pycoll.CustomPlace(1, 0), TypeError)):
        with pytest.raises(error):
            make()
    assert device.XPUPlace is pycoll.XPUPlace and device.IPUPlace is pycoll.IPUPlace  # paddle.device's too
    for cls in (pycoll.CUDAPinnedPlace, pycoll.XPUPlace, pycoll.XPUPinnedPlace, pycoll.IPUPlace, pycoll.CustomPlace):
        assert issubclass(cls, Place)
        assert not isinstance(pycoll.CPUPlace(), cls) and not isinstance(pycoll.to_tensor([1.0]).place, cls)
    if device.gpu_count() == 0:
        with pytest.raises(RuntimeError, match="CPU only"):
            pycoll.CUDAPinnedPlace()
    pinned = tuple.__new__(pycoll.CUDAPinnedPlace, ("gpu_pinned", 0))  # what a GPU machine makes
    for use in (lambda: pycoll.set_device(pinned), lambda: pycoll.device_guard(pinned)):  # no device
        with pytest.raises(ValueError, match="CPU or a GPU"):
            use()
    # paddle's CUDA build makes a pinned tensor; pycoll's pinned memory is host memory (pin_memory())
    assert pycoll.to_tensor([1.0], place=pinned).place.is_cpu_place()


@pytest.mark.gpu
@pytest.mark.skipif(pycoll.device.gpu_count() == 0, reason="needs a GPU")
def test_cuda_pinned_place_on_a_gpu_machine():
    pinned = pycoll.CUDAPinnedPlace()
    assert repr(pinned) == "Place(gpu_pinned)" and pinned == pycoll.CUDAPinnedPlace()
    assert not pinned.is_gpu_place() and not pinned.is_cpu_place()
    for use in (lambda: pycoll.set_device(pinned), lambda: pycoll.device_guard(pinned)):
        with pytest.raises(ValueError, match="CPU or a GPU"):
            use()
    pycoll.set_device("gpu")
    try:
        t = pycoll.to_tensor([1.0, 2.0], place=pinned)  # paddle takes it on a GPU: host memory here
        assert t.place.is_cpu_place() and t.numpy().tolist() == [1.0, 2.0]
    finally:
        pycoll.set_device("cpu")


def test_every_public_function_pickles_by_name():
    # rpc_sync(to, pycoll.matmul, ...) pickles the function by name: wrappers (out=, torch forms) made
    # ~100 of them "not the same object as pycoll.math_ops.matmul" (paddle's pickle)
    import pickle
    import types
    for module in (pycoll, pycoll.nn.functional):
        for name in dir(module):
            fn = getattr(module, name)
            if not name.startswith("_") and isinstance(fn, types.FunctionType):
                assert pickle.loads(pickle.dumps(fn)) is fn, f"{module.__name__}.{name}"
