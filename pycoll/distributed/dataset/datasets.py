"""paddle's ``InMemoryDataset`` and ``QueueDataset`` for collective jobs: MultiSlot text files
(:mod:`slots`) read through ``pipe_command``, iterated as batches of Tensors per slot.

``InMemoryDataset`` holds its records (the lines, checked when loaded) in memory; its
``global_shuffle`` sends every record to a random rank through ``alltoall`` (each rank's blocks
of its own size), in rounds of at most :data:`CHUNK_BYTES` per peer, the records sent freed round
by round, so the exchange never needs a second copy of the whole dataset. Files are read, and
their lines checked, :data:`READ_BYTES` at a time. ``QueueDataset`` streams the files it is given (each
rank's own list, as in paddle), a reader thread staying at most :data:`QUEUE_BATCHES` batches ahead.
"""
from __future__ import annotations

import os
import queue
import subprocess
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll.distributed.dataset.slots import Slot, as_slots, batch, checked, parse
from pycoll.random import get_rng

_DISTRIBUTED_SETTINGS = {"merge_size", "parse_ins_id", "parse_content", "fleet_send_batch_size",
                         "fleet_send_sleep_seconds", "fea_eval", "candidate_size"}
CHUNK_BYTES = 1 << 20  # what one round of global_shuffle sends one peer, at most
QUEUE_BATCHES = 8  # how far QueueDataset's reader may run ahead
READ_BYTES = 1 << 20  # what a file is read (and its lines checked) by at a time


class DatasetBase:
    """Settings and file reading shared by both datasets (paddle's ``init`` keywords; paddle's
    ``fleet.DatasetBase``)."""

    def __init__(self) -> None:
        self.batch_size, self.thread_num, self.pipe_command = 1, 1, "cat"
        self.slots: List[Slot] = []
        self.filelist: List[str] = []
        self.distributed_settings: Dict[str, Any] = {}
        self._lead: Tuple[str, ...] = ()  # the settings whose fields open each line (see slots.parse)

    def init(self, batch_size: int = 1, thread_num: int = 1, use_var: Sequence[Any] = (), input_type: int = 0,
             pipe_command: str = "cat", fs_name: str = "", fs_ugi: str = "", download_cmd: str = "cat",
             **unused: Any) -> None:
        """paddle's settings; ``fs_name``/``fs_ugi``/``download_cmd`` (HDFS) are accepted and unused:
        files are local paths. ``thread_num`` is checked and kept, and files are read by one
        thread: reader threads per file measured no faster (the check holds the GIL;
        bench/dataset_shuffle.py, issue 14)."""
        self.update_settings(batch_size=batch_size, thread_num=thread_num, use_var=use_var,
                             pipe_command=pipe_command)

    def update_settings(self, **settings: Any) -> None:
        for key, value in settings.items():
            if key == "use_var":
                self.slots = as_slots(value)
            elif key in ("batch_size", "thread_num"):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"{type(self).__name__}: {key}={value!r}; it must be a positive int")
                setattr(self, key, value)
            elif key == "pipe_command":
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"{type(self).__name__}: pipe_command={value!r}; give a shell command")
                self.pipe_command = value

    def _init_distributed_settings(self, **settings: Any) -> None:
        """paddle's settings of its C++ reader and shuffle (``merge_size``, ``parse_ins_id``,
        ``parse_content``, ``fleet_send_batch_size``, ``fleet_send_sleep_seconds``, ``fea_eval``,
        ``candidate_size``), which paddle's examples set before ``slots_shuffle``: checked by name
        and kept. ``parse_ins_id`` / ``parse_content``: each line opens with ``1 <instance id>`` /
        ``1 <content>``, read past (pycoll keeps the slots alone); ``merge_size`` > 0 (merging
        the records of one instance id) is refused by name. The others tune paddle's shuffle and
        change nothing here."""
        unknown = sorted(set(settings) - _DISTRIBUTED_SETTINGS)
        if unknown:
            raise TypeError(f"{type(self).__name__}._init_distributed_settings: no setting {unknown[0]!r}; "
                            f"settings: {', '.join(sorted(_DISTRIBUTED_SETTINGS))}")
        merge = settings.get("merge_size", -1)
        if isinstance(merge, (int, float)) and not isinstance(merge, bool) and merge > 0:
            raise NotImplementedError(f"{type(self).__name__}._init_distributed_settings: merge_size={merge!r}: "
                                      f"pycoll does not merge records by instance id; leave it at -1")
        self.distributed_settings = dict(settings)
        self._lead = tuple(name for name in ("parse_ins_id", "parse_content") if settings.get(name))

    def set_filelist(self, filelist: Sequence[str]) -> None:
        if isinstance(filelist, str) or not all(isinstance(f, str) for f in filelist):
            raise TypeError(f"{type(self).__name__}.set_filelist: give a list of paths, got {filelist!r}")
        self.filelist = list(filelist)

    def _files(self, files: List[str]) -> List[str]:
        if not self.slots:
            raise ValueError(f"{type(self).__name__}: no slots: call init(use_var=[...]) first")
        if not self.filelist:
            raise ValueError(f"{type(self).__name__}: the file list is empty: call set_filelist([...])")
        for path in files:
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{type(self).__name__}: {path!r} (in the file list) does not exist")
        return files

    def _lines(self, path: str) -> Iterator[bytes]:
        for lines in self._line_blocks(path):
            yield from lines

    def _line_blocks(self, path: str) -> Iterator[List[bytes]]:
        """``path``'s lines through ``pipe_command`` (the file is its standard input: no file name
        enters the shell), read in blocks of :data:`READ_BYTES` and checked against the slots a
        block at a time (:func:`slots.checked`)."""
        with open(path, "rb") as source:
            if self.pipe_command.strip() == "cat":
                stream: Any = source
                pipe = None
            else:
                pipe = subprocess.Popen(["/bin/sh", "-c", self.pipe_command], stdin=source, stdout=subprocess.PIPE)
                stream = pipe.stdout
            number = 0  # the lines of the blocks before this one
            for block in _blocks(stream):
                raw = block.split(b"\n")
                if block.endswith(b"\n"):
                    raw.pop()
                yield checked(raw, self.slots, path, number, self._lead)
                number += len(raw)
            if pipe is not None and pipe.wait() != 0:
                raise RuntimeError(f"{type(self).__name__}: pipe_command {self.pipe_command!r} failed on "
                                   f"{path} with status {pipe.returncode}")

    def _batches(self, lines: Iterator[bytes]) -> Iterator[Dict[str, Any]]:
        records: List[List[np.ndarray]] = []
        for line in lines:
            records.append(parse(line, self.slots, "a record"))
            if len(records) == self.batch_size:
                yield batch(records, self.slots)
                records = []
        if records:
            yield batch(records, self.slots)


class InMemoryDataset(DatasetBase):
    """Load this rank's files into memory, shuffle them locally or across every rank, iterate."""

    def __init__(self) -> None:
        super().__init__()
        self._records: List[bytes] = []
        self._preload: Optional[threading.Thread] = None
        self._preload_error: Optional[BaseException] = None

    def set_date(self, date: str) -> None:
        """paddle's: the date of the data (``"20211111"``), kept on the dataset; reading is not
        affected (paddle's parameter-server tables use it)."""
        self.date = str(date)

    def load_into_memory(self, is_shuffle: bool = False) -> None:
        records: List[bytes] = []
        for path in self._files(self.filelist):
            for lines in self._line_blocks(path):
                records.extend(lines)
        self._records = records
        if is_shuffle:
            self.local_shuffle()

    def preload_into_memory(self, thread_num: Optional[int] = None) -> None:
        """``load_into_memory`` in a thread; ``wait_preload_done`` joins it (and raises its error)."""
        def run() -> None:
            try:
                self.load_into_memory()
            except BaseException as exc:
                self._preload_error = exc

        self._preload = threading.Thread(target=run, name="pycoll-dataset-preload", daemon=True)
        self._preload.start()

    def wait_preload_done(self) -> None:
        if self._preload is not None:
            self._preload.join()
            self._preload = None
        if self._preload_error is not None:
            error, self._preload_error = self._preload_error, None
            raise error

    def local_shuffle(self) -> None:
        """This rank's records in a new order (pycoll's generator: ``pycoll.seed`` repeats it)."""
        order = get_rng().permutation(len(self._records)).tolist()
        records = self._records
        self._records = [records[i] for i in order]

    def global_shuffle(self, fleet: Any = None, thread_num: int = 12) -> None:
        """With ``fleet``: every record to a random rank (exchanged by alltoall in bounded rounds),
        then a local shuffle; every rank must call it (the parallel environment starts here if it
        has not). Without: this rank's records are shuffled among themselves, as paddle's
        ``global_shuffle()`` shuffles over one trainer ("in distributed mode, pass fleet")."""
        if fleet is None:
            self.local_shuffle()
            return
        dist.init_parallel_env()  # paddle's scripts may not have started it (idempotent)
        world = dist.get_world_size()
        records, self._records = self._records, []
        destination = get_rng().integers(0, world, len(records))
        outgoing: List[List[bytes]] = [[] for _ in range(world)]
        for line, peer in zip(records, destination.tolist()):
            outgoing[peer].append(line)
        del records
        chunks = [_chunks(outgoing.pop(0)) for _ in range(world)]
        rounds = np.array([max((len(c) for c in chunks), default=0)], np.int64)
        dist.all_reduce(rounds, op=dist.ReduceOp.MAX)
        for step in range(int(rounds[0])):
            send = []
            for peer_chunks in chunks:
                if step < len(peer_chunks):
                    send.append(np.frombuffer(b"\n".join(peer_chunks[step]), np.uint8))
                    peer_chunks[step] = []  # the records sent are freed round by round
                else:
                    send.append(np.zeros(0, np.uint8))
            received: List[Any] = []
            dist.alltoall(received, send)
            del send
            for block in received:
                if block.size:
                    self._records.extend(block.tobytes().split(b"\n"))
        self.local_shuffle()

    def get_memory_data_size(self, fleet: Any = None) -> int:
        """Records in memory: this rank's, or every rank's with ``fleet``."""
        return self._count(fleet)

    def get_shuffle_data_size(self, fleet: Any = None) -> int:
        return self._count(fleet)

    def _count(self, fleet: Any) -> int:
        count = np.array([len(self._records)], np.int64)
        if fleet is not None:
            dist.init_parallel_env()  # paddle's scripts may not have started it (idempotent)
            dist.all_reduce(count)
        return int(count[0])

    def slots_shuffle(self, slots: Sequence[str]) -> None:
        """Permute the values of the named slots across this rank's records (paddle's feature
        shuffle for importance evaluation); the other slots stay with their records."""
        names = [s.name for s in self.slots]
        unknown = [s for s in slots if s not in names]
        if unknown:
            raise ValueError(f"InMemoryDataset.slots_shuffle: no slot named {unknown}; slots: {names}")
        records = [parse(line, self.slots, "a record") for line in self._records]
        for k in (names.index(s) for s in slots):
            order = get_rng().permutation(len(records))
            column = [records[i][k] for i in order]
            for record, values in zip(records, column):
                record[k] = values
        self._records = [_line(record) for record in records]

    def release_memory(self) -> None:
        self._records = []

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self._batches(iter(self._records))


class QueueDataset(DatasetBase):
    """Stream the files of the file list, as paddle's does: ``set_filelist`` gives this rank's
    files (paddle's pattern: ``fleet.util.get_file_shard(files)`` picks them)."""

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        files = self._files(self.filelist)
        ahead: "queue.Queue[Any]" = queue.Queue(QUEUE_BATCHES)
        done = object()

        def read() -> None:
            try:
                for item in self._batches(line for path in files for line in self._lines(path)):
                    ahead.put(item)
                ahead.put(done)
            except BaseException as exc:
                ahead.put(exc)

        threading.Thread(target=read, name="pycoll-queue-dataset", daemon=True).start()
        while True:
            item = ahead.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item


def _chunks(lines: List[bytes]) -> List[List[bytes]]:
    """``lines`` in runs of at most :data:`CHUNK_BYTES` (counting a newline after each line; at
    least one line each)."""
    ends = np.cumsum(np.fromiter(map(len, lines), np.int64, len(lines)) + 1)
    chunks: List[List[bytes]] = []
    start, base = 0, 0
    while start < len(lines):
        stop = max(int(np.searchsorted(ends, base + CHUNK_BYTES, "right")), start + 1)
        chunks.append(lines[start:stop])
        base, start = int(ends[stop - 1]), stop
    return chunks


def _blocks(stream: Any) -> Iterator[bytes]:
    """``stream``'s bytes in blocks of about :data:`READ_BYTES` that end at a line's end (the last
    block as it comes)."""
    tail = b""
    while True:
        data = stream.read(READ_BYTES)
        if not data:
            if tail:
                yield tail
            return
        data = tail + data
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        if cut:
            yield data[:cut]


def _line(record: List[np.ndarray]) -> bytes:
    return " ".join(f"{len(v)} " + " ".join(repr(x.item()) for x in v) if len(v) else "0"
                    for v in record).encode()
