"""The engine interface: what every backend implements, in full, and what its requests are.

A backend moves raw arrays of its array module (``xp``) in place over one communicator. The
collective layer (``pycoll.distributed``) validates arguments, stages non-contiguous arrays,
numbers the calls and owns pending work; the backend only runs calls. It never holds a
reference to a group: what a call needs from above (its sequence number) is passed in.

``blocking`` means the same on every engine: True runs the call so that work the caller issues
next sees its result (MPI: the result is in place when the method returns; NCCL: the call is
queued on the current CUDA stream, which orders everything queued after it — the host does not
wait), and the method returns None. False starts the call and returns a :class:`Request`.

Errors: a method raises when its engine fails (an MPI exception, a CUDA or NCCL error); the
collective layer turns that into a :class:`pycoll.CollectiveError` naming the call and group.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Optional, Protocol, Sequence


class Request(Protocol):
    """A started non-blocking call."""

    def test(self, start: bool = True) -> bool:
        """Progress the call; True once it is complete and its results are in place. A call the
        engine holds back (NCCL's grouped point-to-point) is started by it, unless ``start`` is
        False: then it counts as incomplete."""

    def join_stream(self) -> bool:
        """Hand the call to the caller's stream, if the engine has one: True when later work on
        that stream now sees its results (the call then counts as complete for the host),
        False when the engine has no stream and the host must poll :meth:`test`."""


class Watched(Protocol):
    """A call the watchdog times (an enqueued NCCL call): ``name`` and ``seq`` say which call,
    ``started`` (``time.monotonic``) when, ``warned`` whether a stall warning went out;
    ``done`` is True once it completed."""

    name: str
    seq: int
    started: float
    warned: bool

    @property
    def done(self) -> bool: ...


class Backend(Protocol):
    """Collectives over one communicator of ``size`` ranks; this process is ``rank``.

    Reducing methods take a plan from :meth:`plan`; data movement moves bytes, so it serves any
    fixed-size dtype. Arrays are C-contiguous ``xp`` arrays, validated by the caller. ``seq``
    is the caller's number for the call (the watchdog names calls by it; 0 outside the
    collective layer).
    """

    name: str  # "cpu" or "nccl"
    xp: ModuleType  # the array module whose arrays this engine moves
    rank: int
    size: int
    timeout: float  # seconds the engine's own host waits (barrier, split) may take
    stream_ordered: bool  # True: blocking calls are queued on a stream, not finished on return
    device: Optional[int]  # the GPU whose memory the arrays are in; None for host memory

    def plan(self, dtype: Any, op: Any) -> Any:
        """How this engine reduces ``dtype`` with ``op``; ValueError when ``op`` is not a
        ReduceOp, TypeError saying why when the engine cannot reduce ``dtype`` with it."""

    def can_reduce(self, dtype: Any, op: Any) -> bool:
        """Whether :meth:`plan` would succeed."""

    def all_reduce(self, arr: Any, plan: Any, blocking: bool, seq: int = 0) -> Optional[Request]: ...

    def reduce(self, arr: Any, root: int, plan: Any, blocking: bool, seq: int = 0) -> Optional[Request]: ...

    def reduce_scatter(self, out: Any, send: Any, plan: Any, blocking: bool,
                       seq: int = 0) -> Optional[Request]:
        """``send`` holds ``size`` blocks of ``out.size`` elements; block i is reduced into rank i."""

    def broadcast(self, arr: Any, root: int, blocking: bool, seq: int = 0) -> Optional[Request]: ...

    def all_gather(self, out: Any, arr: Any, blocking: bool, seq: int = 0) -> Optional[Request]:
        """``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i."""

    def scatter(self, out: Any, send: Optional[Any], root: int, blocking: bool,
                seq: int = 0) -> Optional[Request]:
        """On ``root``, ``send`` holds ``size`` blocks of ``out.nbytes``; block i goes to rank i."""

    def alltoall(self, out: Any, send: Any, blocking: bool, seq: int = 0) -> Optional[Request]:
        """Block j of ``send`` goes to rank j; block i of ``out`` comes from rank i."""

    def alltoallv(self, out: Any, send: Any, send_bytes: Sequence[int], recv_bytes: Sequence[int],
                  blocking: bool, seq: int = 0) -> Optional[Request]:
        """Like alltoall with blocks of their own sizes: ``send`` holds ``send_bytes[j]`` bytes for
        rank j, then the next rank's, in rank order; ``out`` receives ``recv_bytes[i]`` bytes from
        rank i the same way."""

    def gather(self, out: Optional[Any], arr: Any, root: int, blocking: bool,
               seq: int = 0) -> Optional[Request]:
        """On ``root``, ``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i
        (``out`` is None elsewhere)."""

    def send(self, arr: Any, dst: int, tag: int, blocking: bool, seq: int = 0) -> Optional[Request]: ...

    def recv(self, arr: Any, src: int, tag: Optional[int], blocking: bool, seq: int = 0,
             arrived: Optional[Callable[[Optional[int], Optional[int]], None]] = None) -> Optional[Request]:
        """Receive into ``arr`` what ``src`` sends with ``tag`` (None: with any tag, in the order
        sent). ``arrived``, when given, is called once with the number of bytes that came (which
        may be fewer than ``arr.nbytes``) and the message's tag: when the data is in place (MPI's
        status), or at once with None, None where the engine cannot tell (NCCL)."""

    def barrier(self, blocking: bool, seq: int = 0) -> Optional[Request]:
        """Blocking: returns once every rank has entered (on the host, whatever the engine)."""

    def split(self, member: bool, key: int, timeout: float, color: int = 0) -> Optional["Backend"]:
        """Collective over this communicator: members get an engine over a new communicator of
        the members of their ``color`` (a non-negative int; ordered by ``key``, then rank) whose
        host waits take ``timeout``."""

    def stalled_call(self) -> Optional[Watched]:
        """The oldest enqueued call not complete (stream-ordered engines), else None. Called
        from the watchdog thread."""

    def async_error(self) -> Optional[str]:
        """An error the engine reported asynchronously, as text, else None (watchdog thread)."""

    def abort(self) -> None:
        """Stop the communicator's work so the job can end (any thread; idempotent)."""

    def free(self) -> None:
        """Release the communicator (collective over it)."""
