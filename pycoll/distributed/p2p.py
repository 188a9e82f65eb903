"""Batched point-to-point: paddle's ``P2POp`` and ``batch_isend_irecv``, and ``wait``.

A batch is checked whole before anything starts, so a bad entry leaves nothing half-sent. Its
transfers then start in list order as non-blocking sends and receives; on NCCL the engine holds
non-blocking transfers back and launches them together, so a batch is one NCCL group (launched
when a task of the batch is waited for or tested, or at the group's next collective), and
patterns that would deadlock as single calls (every rank sends before it receives) complete.
"""
from __future__ import annotations

from typing import Any, List, Optional

from pycoll.distributed import _arrays
from pycoll.distributed.collective import irecv, isend, peer_of
from pycoll.distributed.env import member_group, outside
from pycoll.distributed.group import Group
from pycoll.distributed.task import COMPLETED, Task, drain


class P2POp:
    """One transfer of a :func:`batch_isend_irecv`: ``op`` is ``isend`` or ``irecv`` (paddle's
    functions, or these names), ``peer`` the other side's global rank."""

    def __init__(self, op: Any, tensor: Any, peer: int, group: Optional[Group] = None):
        if op not in (isend, irecv, "isend", "irecv"):
            raise ValueError(f"pycoll.distributed.P2POp: op={op!r}; it must be "
                             f"pycoll.distributed.isend or pycoll.distributed.irecv")
        self.op = isend if op in (isend, "isend") else irecv
        self.tensor = tensor
        self.peer = peer
        self.group = group

    def __repr__(self) -> str:
        return f"P2POp({self.op.__name__}, peer={self.peer})"


def batch_isend_irecv(p2p_op_list: List[P2POp]) -> List[Task]:
    """Start every transfer of ``p2p_op_list`` (in its order, which the peers' batches must
    match) and return their tasks. All ops use one group."""
    fn = "batch_isend_irecv"
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list:
        raise ValueError(f"pycoll.distributed.{fn}: p2p_op_list must be a non-empty list of P2POp")
    for i, item in enumerate(p2p_op_list):
        if not isinstance(item, P2POp):
            raise TypeError(f"pycoll.distributed.{fn}: p2p_op_list[{i}] is {type(item).__name__}, "
                            f"not a P2POp")
        if item.group is not p2p_op_list[0].group:
            raise ValueError(f"pycoll.distributed.{fn}: p2p_op_list[{i}] uses another group than "
                             f"p2p_op_list[0]; a batch runs on one group")
    if outside(p2p_op_list[0].group, fn):
        return [COMPLETED] * len(p2p_op_list)
    g = member_group(p2p_op_list[0].group, fn)
    for i, item in enumerate(p2p_op_list):  # every check first: nothing starts unless all pass
        peer_of(g, item.peer, fn, f"p2p_op_list[{i}].peer")
        if item.op is isend:
            _arrays.send_buffer(item.tensor, g.engine.xp, fn, f"p2p_op_list[{i}].tensor")
        else:
            _arrays.recv_buffer(item.tensor, g.engine.xp, fn, f"p2p_op_list[{i}].tensor")
    return [item.op(item.tensor, item.peer, item.group) for item in p2p_op_list]


def wait(tensor: Any, group: Optional[Group] = None, use_calc_stream: bool = True) -> None:
    """Wait until the group's non-blocking work is complete (paddle's ``wait``; on nccl the
    current stream waits for it, the host does not). ``tensor`` names the device, as in paddle."""
    if outside(group, "wait"):
        return
    g = member_group(group, "wait")
    _arrays.array_of(tensor, g.engine.xp, "wait", "tensor")
    drain(g)
