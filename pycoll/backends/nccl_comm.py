"""NCCL itself, for the engine: ``cupy.cuda.nccl``, what it can reduce, and its communicators.

Here are the dtype and op tables and the :class:`Reduction` plans built from them, unique ids,
communicator creation, the split of a communicator (``ncclCommSplit``, or fresh unique ids
all-gathered over the parent where NCCL or CuPy is too old) and the launch of point-to-point
transfers as one NCCL group. ``cupy.cuda.nccl`` comes through :mod:`pycoll.backends.cuda_api`,
imported when first needed.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.backends.cuda_api import cuda
from pycoll.backends.reduce_op import ReduceOp, is_reduce_op, not_a_reduce_op, op_name

UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES
_NO_COLOR = -1  # NCCL_SPLIT_NOCOLOR: this rank joins no communicator of a split
_NATIVE_AVG_VERSION = 21000  # ncclAvg arrived in NCCL 2.10
_COMM_SPLIT_VERSION = 21801  # ncclCommSplit arrived in NCCL 2.18.1

# dtype name -> (NCCL datatype constant, NCCL elements per array element)
NCCL_TYPES = {
    "int8": ("NCCL_INT8", 1),
    "uint8": ("NCCL_UINT8", 1),
    "int32": ("NCCL_INT32", 1),
    "uint32": ("NCCL_UINT32", 1),
    "int64": ("NCCL_INT64", 1),
    "uint64": ("NCCL_UINT64", 1),
    "float16": ("NCCL_FLOAT16", 1),
    "bfloat16": ("NCCL_BFLOAT16", 1),  # ml_dtypes.bfloat16, where CuPy and NCCL have it
    "float32": ("NCCL_FLOAT32", 1),
    "float64": ("NCCL_FLOAT64", 1),
    "complex64": ("NCCL_FLOAT32", 2),
    "complex128": ("NCCL_FLOAT64", 2),
    "bool": ("NCCL_UINT8", 1),  # reduced by BOOL_OPS
}
# booleans reduce as paddle's do: a sum or max is "any", a min or product "all" (bytes of 0/1)
BOOL_OPS = {ReduceOp.SUM: "NCCL_MAX", ReduceOp.MAX: "NCCL_MAX", ReduceOp.MIN: "NCCL_MIN", ReduceOp.PROD: "NCCL_MIN"}
NCCL_OPS = {
    ReduceOp.SUM: "NCCL_SUM",
    ReduceOp.MAX: "NCCL_MAX",
    ReduceOp.MIN: "NCCL_MIN",
    ReduceOp.PROD: "NCCL_PROD",
    ReduceOp.AVG: "NCCL_AVG",
}


def nccl_module() -> Any:
    """``cupy.cuda.nccl``, imported on first use; RuntimeError when libnccl cannot be loaded."""
    nccl = cuda().nccl
    if not nccl.available:
        raise RuntimeError(
            "the nccl backend needs NCCL, but cupy.cuda.nccl could not load libnccl; install "
            "the NCCL wheel matching your CuPy (pip install nvidia-nccl-cu12 / nvidia-nccl-cu13)")
    return nccl


def _has(constant: str) -> bool:
    """Whether the installed ``cupy.cuda.nccl`` defines ``constant`` (False without NCCL)."""
    try:
        return hasattr(nccl_module(), constant)
    except Exception:
        return False


def reducible_dtypes() -> List[str]:
    return [name for name, (const, _) in NCCL_TYPES.items() if name != "bfloat16" or _has(const)]


def reduction_error(dtype: np.dtype, op: int) -> Optional[str]:
    """Why ``op`` cannot reduce ``dtype`` on this engine, or None when it can."""
    if not is_reduce_op(op):
        return not_a_reduce_op(op)
    entry = NCCL_TYPES.get(dtype.name)
    if entry is None or (dtype.name == "bfloat16" and not _has(entry[0])):
        return (f"dtype {dtype} cannot be reduced by the nccl backend; "
                f"reducible dtypes: {', '.join(reducible_dtypes())}")
    if dtype.kind == "c":
        if op in (ReduceOp.MAX, ReduceOp.MIN):
            return f"{op_name(op)} is not defined for complex dtype {dtype}"
        if op == ReduceOp.PROD:
            return (f"ReduceOp.PROD of complex dtype {dtype} is not supported by the nccl backend: "
                    f"NCCL would multiply real and imaginary parts separately, not as complex numbers")
    if op == ReduceOp.AVG and dtype.kind not in "fc" and dtype.name != "bfloat16":  # ml_dtypes: kind "V"
        return f"ReduceOp.AVG needs a floating or complex dtype, got {dtype}"
    return None


def _native_avg() -> bool:
    nccl = nccl_module()
    return hasattr(nccl, "NCCL_AVG") and nccl.get_version() >= _NATIVE_AVG_VERSION


class Reduction:
    """How to run one (dtype, op) reduction: NCCL datatype and op, element factor, and whether
    the average is a sum followed by a divide (NCCL before 2.10)."""

    __slots__ = ("datatype", "op", "factor", "average")

    def __init__(self, dtype: np.dtype, op: int):
        nccl = nccl_module()
        type_name, self.factor = NCCL_TYPES[dtype.name]
        self.datatype = getattr(nccl, type_name)
        self.average = op == ReduceOp.AVG and not _native_avg()
        ops = BOOL_OPS if dtype.kind == "b" else NCCL_OPS
        self.op = nccl.NCCL_SUM if self.average else getattr(nccl, ops[op])


# -- unique ids and communicators ---------------------------------------------------------
def new_unique_id() -> bytes:
    """A fresh NCCL unique id as bytes (CuPy 14 returns bytes, earlier CuPy a tuple of chars)."""
    uid = nccl_module().get_unique_id()
    return uid if isinstance(uid, bytes) else bytes(b & 0xFF for b in uid)


def new_communicator(nranks: int, uid: bytes, rank: int) -> Any:
    """``NcclCommunicator(nranks, uid, rank)`` on the current device; collective, blocking."""
    if len(uid) != UNIQUE_ID_BYTES:
        raise ValueError(f"uid has {len(uid)} bytes; an NCCL unique id has {UNIQUE_ID_BYTES}")
    Communicator = nccl_module().NcclCommunicator
    try:
        return Communicator(nranks, uid, rank)
    except TypeError:  # CuPy before 14 takes the id as a tuple of (signed) chars
        return Communicator(nranks, tuple(b - 256 if b > 127 else b for b in uid), rank)


def split_order(table: np.ndarray, color: int) -> List[int]:
    """The parent ranks of the members of ``color`` in new-rank order, from the gathered
    ``table`` (row r: parent rank r's ``[member, key, color]``): by key, then parent rank, as
    ncclCommSplit orders them."""
    return [r for _, r in sorted((int(key), r) for r, (member, key, c) in enumerate(table)
                                 if member and c == color)]


def split_communicator(parent: Any, member: bool, key: int, settle: Callable[[], None], color: int = 0) -> Any:
    """The communicator a split of the engine ``parent`` gives this rank (None to a non-member);
    collective over ``parent``, whose calls must all have completed. The members of one
    ``color`` share a communicator, their ranks ordered by ``key``, then by parent rank.

    Uses ``NcclCommunicator.commSplit`` (CuPy 14+, NCCL 2.18.1+). Otherwise (CuPy 13, or an
    older NCCL) every rank's ``[member, key, color]`` is all-gathered, the new rank 0 of each
    color makes a unique id, the ids are all-gathered, and each member builds its communicator
    from its color's id (``settle()`` waits on the host for each of those steps).
    """
    if hasattr(parent.comm, "commSplit") and nccl_module().get_version() >= _COMM_SPLIT_VERSION:
        return parent.comm.commSplit(color if member else _NO_COLOR, key)
    xp = parent.xp
    mine = xp.asarray(np.array([int(member), key, color if member else _NO_COLOR], np.int32))
    table = xp.empty((parent.size, 3), np.int32)
    parent.all_gather(table, mine, True)
    settle()
    order = split_order(table.get(), color) if member else []
    founder = bool(order) and order[0] == parent.rank
    my_uid = np.frombuffer(new_unique_id(), np.uint8) if founder else np.zeros(UNIQUE_ID_BYTES, np.uint8)
    uids = xp.empty((parent.size, UNIQUE_ID_BYTES), np.uint8)
    parent.all_gather(uids, xp.asarray(my_uid), True)
    settle()
    if not member:
        return None
    return new_communicator(len(order), uids[order[0]].get().tobytes(), order.index(parent.rank))


# A point-to-point transfer inside an NCCL group: (is_send, device pointer, bytes, peer).
Transfer = Tuple[bool, int, int, int]


def launch_group(comm: Any, transfers: Sequence[Transfer], stream: int, nccl: Any = None) -> None:
    """Enqueue ``transfers`` (bytes) on ``stream`` as one NCCL group (``groupStart``/``groupEnd``);
    ``nccl`` is ``cupy.cuda.nccl`` (:func:`nccl_module` when not given)."""
    nccl = nccl or nccl_module()
    u8 = nccl.NCCL_UINT8
    nccl.groupStart()
    try:
        for is_send, ptr, nbytes, peer in transfers:
            if is_send:
                comm.send(ptr, nbytes, u8, peer, stream)
            else:
                comm.recv(ptr, nbytes, u8, peer, stream)
    finally:
        nccl.groupEnd()
