"""``pycoll.distributed.stream``: paddle's stream variants of the collectives, faces over the same
calls. ``use_calc_stream=True`` asks for the collective on the computation stream: pycoll's
blocking calls already run on the current stream on nccl, so it changes nothing there, and MPI
has no streams; as in paddle it needs ``sync_op=True``. Where paddle takes a tensor or a list
(``tensor_or_tensor_list``), one tensor stands for its equal parts, one per rank: shaped as the
rank's own tensor when the element counts allow (``[nranks, *shape]``), else along dim 0.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed import _arrays, collective, p2p
from pycoll.distributed.env import member_group, outside
from pycoll._errors import RefusedArgument
from pycoll.distributed.group import Group
from pycoll.distributed.task import COMPLETED, Task

TensorOrList = Union[Any, Sequence[Any]]


def _stream(fn: str, sync_op: bool, use_calc_stream: bool) -> None:
    if use_calc_stream and not sync_op:
        raise RefusedArgument(f"pycoll.distributed.stream.{fn}: use_calc_stream=True needs sync_op=True "
                         f"(a call on the computation stream is ordered with it, not waited for)")


def _as_list(items: TensorOrList, group: Optional[Group], fn: str, arg: str, like: Any = None) -> List[Any]:
    """A list stays; one tensor becomes its per-rank parts, each shaped as the one tensor ``like``
    (the rank's own input or output) where the element counts allow."""
    if items is None or isinstance(items, (list, tuple)) or outside(group, f"stream.{fn}"):
        return items  # (outside the group the collective returns at once)
    g = member_group(group, f"stream.{fn}")
    if like is None:
        return _arrays.parts(items, g.nranks, g.array_module, f"stream.{fn}", arg)
    return _arrays.listed(items, g.nranks, g.array_module, f"stream.{fn}", arg, like)


def all_reduce(tensor: Any, op: int = ReduceOp.SUM, group: Optional[Group] = None,
               sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("all_reduce", sync_op, use_calc_stream)
    return collective.all_reduce(tensor, op, group, sync_op)


def all_gather(tensor_or_tensor_list: TensorOrList, tensor: Any, group: Optional[Group] = None,
               sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("all_gather", sync_op, use_calc_stream)
    out = _as_list(tensor_or_tensor_list, group, "all_gather", "tensor_or_tensor_list", like=tensor)
    return collective.all_gather(out, tensor, group, sync_op)


def alltoall(out_tensor_or_tensor_list: TensorOrList, in_tensor_or_tensor_list: TensorOrList,
             group: Optional[Group] = None, sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("alltoall", sync_op, use_calc_stream)
    out, send = out_tensor_or_tensor_list, in_tensor_or_tensor_list
    if isinstance(out, (list, tuple)) or isinstance(send, (list, tuple)):  # (two tensors: collective.alltoall's)
        out = _as_list(out, group, "alltoall", "out_tensor_or_tensor_list")
        send = _as_list(send, group, "alltoall", "in_tensor_or_tensor_list")
    return collective.alltoall(out, send, group, sync_op)


def alltoall_single(out_tensor: Any, in_tensor: Any, out_split_sizes: Optional[List[int]] = None,
                    in_split_sizes: Optional[List[int]] = None, group: Optional[Group] = None,
                    sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    """Note paddle's order here: ``out_split_sizes`` before ``in_split_sizes``."""
    _stream("alltoall_single", sync_op, use_calc_stream)
    return collective.alltoall_single(out_tensor, in_tensor, in_split_sizes, out_split_sizes,
                                      group, sync_op)


def broadcast(tensor: Any, src: int, group: Optional[Group] = None, sync_op: bool = True,
              use_calc_stream: bool = False) -> Task:
    _stream("broadcast", sync_op, use_calc_stream)
    return collective.broadcast(tensor, src, group, sync_op)


def gather(tensor: Any, gather_list: Optional[List[Any]] = None, dst: int = 0,
           group: Optional[Group] = None, sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("gather", sync_op, use_calc_stream)
    return collective.gather(tensor, gather_list, dst, group, sync_op)


def reduce(tensor: Any, dst: int = 0, op: int = ReduceOp.SUM, group: Optional[Group] = None,
           sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("reduce", sync_op, use_calc_stream)
    return collective.reduce(tensor, dst, op, group, sync_op)


def reduce_scatter(tensor: Any, tensor_or_tensor_list: TensorOrList, op: int = ReduceOp.SUM,
                   group: Optional[Group] = None, sync_op: bool = True,
                   use_calc_stream: bool = False) -> Task:
    _stream("reduce_scatter", sync_op, use_calc_stream)
    parts = _as_list(tensor_or_tensor_list, group, "reduce_scatter", "tensor_or_tensor_list", like=tensor)
    return collective.reduce_scatter(tensor, parts, op, group, sync_op)


def scatter(tensor: Any, tensor_or_tensor_list: Optional[TensorOrList] = None, src: int = 0,
            group: Optional[Group] = None, sync_op: bool = True, use_calc_stream: bool = False) -> Task:
    _stream("scatter", sync_op, use_calc_stream)
    if outside(group, "stream.scatter"):
        return COMPLETED
    # the source's one tensor is cut into parts inside the collective, which tells every rank
    # when the source refuses it (refused here, the other ranks would wait)
    return collective.scatter_from(tensor, tensor_or_tensor_list, src, group, sync_op, "stream.scatter",
                                   "tensor_or_tensor_list")


def send(tensor: Any, dst: int = 0, group: Optional[Group] = None, sync_op: bool = True,
         use_calc_stream: bool = False) -> Task:
    _stream("send", sync_op, use_calc_stream)
    return p2p.send(tensor, dst, group, sync_op)


def recv(tensor: Any, src: int = 0, group: Optional[Group] = None, sync_op: bool = True,
         use_calc_stream: bool = False) -> Task:
    _stream("recv", sync_op, use_calc_stream)
    return p2p.recv(tensor, src, group, sync_op)


all_to_all = alltoall  # paddle's stream module has both names
