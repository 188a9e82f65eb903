"""The engine interface (pycoll/backends/base.py) is implemented in full by every engine: each
member of ``Backend`` and ``Request``, with parameters that accept the same calls."""
import inspect
from typing import List

import pytest

from pycoll.backends import base
from pycoll.backends.mpi import MPIBackend, MPIRequest
from pycoll.backends.nccl import NCCLBackend
from pycoll.backends.nccl_calls import NCCLRequest


def members(protocol) -> List[str]:
    """The protocol's methods and attributes, by name."""
    names = {n for n in vars(protocol) if not n.startswith("_")}
    names |= set(getattr(protocol, "__annotations__", {}))
    return sorted(names)


def parameter_names(fn) -> List[str]:
    return [p.name for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def missing(implementation, protocol) -> List[str]:
    """What ``implementation`` lacks of ``protocol``: absent members, and methods whose leading
    parameters differ from the protocol's (extra trailing ones are allowed)."""
    source = inspect.getsource(implementation)
    found = []
    for name in members(protocol):
        declared = getattr(protocol, name, None)
        mine = getattr(implementation, name, None)
        if callable(declared):
            wanted = parameter_names(declared)
            if not callable(mine) or parameter_names(mine)[:len(wanted)] != wanted:
                found.append(name)
        elif not hasattr(implementation, name) and f"self.{name} =" not in source:  # class or __init__
            found.append(name)
    return found


@pytest.mark.parametrize("engine", [MPIBackend, NCCLBackend])
def test_every_engine_implements_the_whole_backend_interface(engine):
    assert missing(engine, base.Backend) == []


@pytest.mark.parametrize("request_type", [MPIRequest, NCCLRequest])
def test_every_request_implements_the_whole_request_interface(request_type):
    assert missing(request_type, base.Request) == []


def test_the_check_notices_what_is_missing_or_different():
    class Partial:
        name = "partial"

        def all_reduce(self, arr, plan):  # blocking and seq missing
            pass

    gaps = missing(Partial, base.Backend)
    assert "all_reduce" in gaps and "broadcast" in gaps and "xp" in gaps and "name" not in gaps
