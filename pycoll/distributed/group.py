"""Process groups: a set of global ranks, the engine over their communicator, a timeout, and the
group's work in flight."""
from __future__ import annotations

import numbers
import operator
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Tuple

import numpy as np

from pycoll._errors import CollectiveError


PADDLE_BACKEND_NAMES = {"cpu": "GLOO", "nccl": "NCCL"}  # paddle's names of pycoll's engines
_REFUSALS_KEPT = 64  # a stall is about a recent call: older refusals are let go


def as_rank(value: Any, fn: str, arg: str) -> int:
    """``value``, a rank argument, as an int: any integral number but a bool, or a 0-d integer
    Tensor, as paddle takes them (``np.int64(2)``, an entry of ``list(np.arange(n))``). Every
    rank argument of the groups, the environment and the object collectives comes through here,
    so that they take the same values. TypeError naming ``fn`` and ``arg`` otherwise; the range is the caller's."""
    if type(value) is int:
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}: {arg}={value!r} ({type(value).__name__}); a rank must be an integer, not a bool")
    if isinstance(value, numbers.Integral):
        return int(value)
    if hasattr(type(value), "__index__"):  # a 0-d integer Tensor, as paddle takes it
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{fn}: {arg}={value!r} ({type(value).__name__}); a rank must be an integer")


class Group:
    """A communication group (paddle's ``Group``).

    ``engine`` is the backend engine over the group's communicator (paddle's ``process_group``;
    None where this rank is not a member, or once destroyed); ``backend`` is its name as paddle
    spells it.

    ``ranks`` are global ranks in group order; ``rank`` is this process's rank in the group, or
    -1 when it is not a member (then it has no engine, ``world_size`` is -1 as in paddle, and
    its collectives return at once). ``seq`` counts the collectives this rank has called on the
    group, refused ones included, and its sends and receives (``p2p_calls`` of them), so that a
    call refused on one rank shows as a mismatch under ``PYCOLL_CHECK``, which compares the
    collectives' numbers (``seq - p2p_calls``: point-to-point calls are made by some ranks only). ``refused`` keeps the numbers of the latest calls this rank refused itself
    (bad input, before anything moved) with the error: a peer stalled in such a call waits for
    a part this rank will never give, which the stall notices name (:meth:`note_refused`).

    The group owns its non-blocking work: ``pending`` holds every task not yet known to be
    complete, oldest first, with the arrays its engine reads and writes, whether or not the
    caller kept the task; later calls retire the completed ones. ``failure`` holds the error of
    such a task, raised by the group's next call.

    ``shut_down`` is True between ``shutdown_process_group`` and ``restart_process_group``: the
    communicator is released (no engine), and the group's calls are refused naming that state.
    """

    def __init__(self, gid: int, ranks: List[int], global_rank: int, engine: Any, timeout: float):
        self.id = gid
        self.ranks = list(ranks)
        self.nranks = len(self.ranks)
        self._index = {r: i for i, r in enumerate(self.ranks)}
        self.rank = self._index.get(global_rank, -1)
        self.engine = engine
        self.timeout = timeout
        self.seq = 0
        self.p2p_calls = 0  # of seq: sends and receives, which only some ranks make
        self.refused: Dict[int, str] = {}  # call number: "ValueError: ...", the latest _REFUSALS_KEPT
        self.refused_collectives: Dict[int, str] = {}  # the same, of collectives, by collectives_begun
        self.collectives_refused = 0  # of collectives_begun: the refused ones, which sent nothing
        self.settled = 0  # the seq of the latest call past its argument checks (refused or made)
        self.pending: Deque[Any] = deque()
        self.touches: Tuple[Tuple[Any, ...], Tuple[Any, ...]] = ((), ())  # the call in progress's arrays: read, written
        self.failure: Optional[CollectiveError] = None
        self.shut_down = False
        self.host_table: Any = None  # agreement's buffers for this group's blocking comparisons on the host
        # agreement's digest of the collectives made without a comparison since the last one (the
        # next one compares it), how many, and the first one's number
        self.unchecked_digest = self.unchecked_calls = self.unchecked_from = 0

    @property
    def world_size(self) -> int:
        """The number of ranks, or -1 on a rank outside the group (paddle's); ``nranks`` is
        the number everywhere."""
        return self.nranks if self.rank >= 0 else -1

    @property
    def backend(self) -> Optional[str]:
        """paddle's name of the group's engine: ``"NCCL"``, or ``"GLOO"`` for the cpu backend (MPI
        where paddle has gloo); None without an engine."""
        return PADDLE_BACKEND_NAMES[self.engine.name] if self.engine is not None else None

    @property
    def process_group(self) -> Any:
        """The engine (paddle's ``ProcessGroup``)."""
        return self.engine

    @property
    def name(self) -> str:
        return "world" if self.id == 0 else f"group {self.id}"

    @property
    def backend_name(self) -> str:
        """pycoll's name of this group's backend: ``"cpu"`` (MPI) or ``"nccl"``."""
        return self._live_engine("backend_name").name

    @property
    def array_module(self) -> Any:
        """The array module whose arrays this group's engine moves (NumPy, or CuPy on nccl)."""
        return self._live_engine("array_module").xp

    def _live_engine(self, what: str) -> Any:
        if self.engine is None:
            raise ValueError(f"Group.{what}: {self.describe()} has no engine on this rank (not a "
                             f"member, or destroyed)")
        return self.engine

    @property
    def collectives_begun(self) -> int:
        """The collectives this rank has called on the group (refused ones included): the same
        number on every member at the same collective, whatever point-to-point calls came between."""
        return self.seq - self.p2p_calls

    @property
    def collectives_made(self) -> int:
        """The collectives this rank has made on the group, refused ones left out: MPI pairs the
        members' calls on a communicator by this count (the stall notices compare it)."""
        return self.seq - self.p2p_calls - self.collectives_refused

    def note_refused(self, exc: BaseException, collective: bool = True) -> None:
        """Record that this rank refused its call #``seq`` on the group (``exc``, a
        TypeError/ValueError raised before the call moved anything): one dict entry per refusal
        (two for a collective: also by ``collectives_begun``, which ``refusal_checks`` asks
        about), nothing on a call that goes through. Only the main thread writes; the watchdog's
        thread reads single entries."""
        text = f"{type(exc).__name__}: {exc}"
        records = [(self.refused, self.seq)]
        if collective:
            records.append((self.refused_collectives, self.collectives_begun))
            self.collectives_refused += 1
        for refused, number in records:
            refused[number] = text
            if len(refused) > _REFUSALS_KEPT:
                del refused[next(iter(refused))]
        self.settled = self.seq

    def is_member(self) -> bool:
        return self.rank >= 0

    def get_group_rank(self, rank: int) -> int:
        """The rank in this group of global rank ``rank``, as paddle's: -1 on a rank outside the
        group; a ``rank`` that is not a member raises ValueError there (paddle's ``list.index``
        says ``2 is not in list``; this names the group too)."""
        if not self.is_member():
            return -1
        index = self.index_of(as_rank(rank, "Group.get_group_rank", "rank"))
        if index < 0:
            raise ValueError(f"Group.get_group_rank: {rank} is not in list: not a rank of {self.describe()}")
        return index

    def index_of(self, global_rank: int) -> int:
        """The group rank of the int ``global_rank``, -1 when it is not a member (the
        collectives' src/dst, on every rooted call: kept cheap; they name the argument in their
        own error)."""
        return self._index.get(global_rank, -1)

    def get_global_rank(self, rank: int) -> int:
        """The global rank of group rank ``rank`` (paddle's: -1 on a rank outside the group)."""
        if not self.is_member():
            return -1
        index = as_rank(rank, "Group.get_global_rank", "rank")
        if not 0 <= index < self.nranks:
            raise ValueError(f"Group.get_global_rank: rank={rank!r}; {self.describe()} has ranks 0..{self.nranks - 1}")
        return self.ranks[index]

    def describe(self) -> str:
        """Name and ranks, for error messages (and the way back, while shut down)."""
        if self.shut_down:
            return (f"{self.name} (ranks {self.ranks}; shut down by shutdown_process_group, "
                    f"restart_process_group makes it usable again)")
        return f"{self.name} (ranks {self.ranks})"

    def __repr__(self) -> str:
        backend = self.engine.name if self.engine is not None else None
        return f"Group(id={self.id}, ranks={self.ranks}, rank={self.rank}, backend={backend})"
