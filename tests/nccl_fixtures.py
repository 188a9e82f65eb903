"""Fixtures for the NCCL engine's unit tests (test_nccl.py, test_watchdog.py): the CuPy
stand-in of host_cuda.py in use, and an engine over a communicator that records its calls."""
import pytest

from host_cuda import Communicator, HostCuda
from pycoll.backends import cuda_api
from pycoll.backends.nccl import NCCLBackend


@pytest.fixture
def fake(monkeypatch):
    """A recording HostCuda in CuPy's place, whose events are not done until told."""
    cuda = HostCuda()
    previous = cuda_api.use(cuda)
    monkeypatch.setattr(NCCLBackend._plans, "_made", {})  # plans hold the stand-in's NCCL constants
    yield cuda
    cuda_api.use(previous)


@pytest.fixture
def backend(fake):
    """An engine on rank 0 of 2 over a recording communicator, its log cleared."""
    b = NCCLBackend(Communicator(fake, rank=0, size=2), timeout=0.2)
    fake.clear()
    return b
