"""At exit, the messages sent to this rank that it never received, said by name.

A ``send`` without its ``recv`` completes on MPI when the message is small (the sender does not
wait for the receiver), and the receives before it may then have taken messages meant for later
ones: a pipeline whose rank skipped one receive gets each later message one step late, and the
job ends with status 0. Once every rank has reached its exit (the exit notices say so), all
their sends have been posted, so what is still waiting on this rank's communicators was never
received: each such message is taken (so that MPI does not finalize with it pending) and the
rank logs an error naming, per group and sender, how many there were and their bytes
(``PYCOLL_CHECK``'s descriptor of each send is taken with it, not counted).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Tuple

from pycoll._logging import logger
from pycoll.distributed.check import DESCRIPTOR_TAG

_MOST = 1000  # messages taken per communicator at most (the report says "at least" past it)


def report_unreceived(groups: Iterable[Any]) -> None:
    """Log each live group's messages (on an MPI engine) sent to this rank and never received."""
    from mpi4py import MPI

    for group in groups:
        engine = group.engine
        comm = getattr(engine, "comm", None)
        if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
            continue  # not MPI (NCCL has no probe), or destroyed
        left: Dict[int, Tuple[int, int]] = {}  # the sender's global rank: (messages, bytes)
        status = MPI.Status()
        taken = 0
        while taken < _MOST and comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG, status):
            size, source, tag = status.Get_count(MPI.BYTE), status.Get_source(), status.Get_tag()
            comm.Recv([bytearray(size), MPI.BYTE], source, tag)
            taken += 1
            if tag != DESCRIPTOR_TAG:
                count, total = left.get(group.ranks[source], (0, 0))
                left[group.ranks[source]] = (count + 1, total + size)
        for sender, (count, total) in sorted(left.items()):
            logger.error("%s%d message(s) (%d bytes) that rank %d sent on %s were never received here: a "
                         "send without its recv, so the receives before it may have taken messages meant for "
                         "later ones", "at least " if taken >= _MOST else "", count, total, sender,
                         group.describe())
