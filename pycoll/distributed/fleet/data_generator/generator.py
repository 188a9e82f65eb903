"""paddle's data generators: a user's ``generate_sample`` turns each raw line into slots, and the
generator writes them to standard output in the MultiSlot text format that ``InMemoryDataset`` /
``QueueDataset`` read, so a script running one is a dataset's ``pipe_command``::

    class Words(fleet.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def sample():
                ids = [int(w) for w in line.split()]
                yield ("words", ids), ("label", [ids[0] % 2])
            return sample

    Words().run_from_stdin()      # gen.py; dataset.init(pipe_command="python gen.py", ...)

A line of output holds, for each slot in order, its count and its values: ``3 1926 8 17 1 0``.
The text is byte for byte what paddle 3.3.1's generators write for the same samples.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple


class DataGenerator:
    """The base of the generators: override ``generate_sample`` (and, to work on several samples
    at once, ``generate_batch`` with ``set_batch``); a subclass says how a sample is written."""

    def __init__(self) -> None:
        self._proto_info: Optional[List[Tuple[str, str]]] = None
        self.batch_size_ = 32

    def set_batch(self, batch_size: int) -> None:
        """How many samples ``generate_batch`` receives at a time (32 by default)."""
        self.batch_size_ = batch_size

    def run_from_memory(self) -> None:
        """Write the samples of ``generate_sample(None)`` (data made in memory, for debugging and
        benchmarks)."""
        self._run([None])

    def run_from_stdin(self) -> None:
        """Write the samples of ``generate_sample(line)`` for every line of standard input."""
        self._run(sys.stdin)

    def _run(self, lines: Iterable[Optional[str]]) -> None:
        """Samples of every line, a None skipped, through ``generate_batch`` in runs of
        ``batch_size_`` (the last run shorter), written in order."""
        pending: List[Any] = []
        for line in lines:
            for sample in self.generate_sample(line)():
                if sample is None:
                    continue
                pending.append(sample)
                if len(pending) == self.batch_size_:
                    self._write(pending)
                    pending = []
        if pending:
            self._write(pending)

    def _write(self, samples: List[Any]) -> None:
        out = sys.stdout
        for sample in self.generate_batch(samples)():
            out.write(self._gen_str(sample))

    def _gen_str(self, line: Any) -> str:
        raise NotImplementedError("pls use MultiSlotDataGenerator or PairWiseDataGenerator")

    def generate_sample(self, line: Optional[str]) -> Callable[[], Iterator[Any]]:
        """Override: a function returning an iterator over the samples of raw ``line`` (None
        under ``run_from_memory``), each a list or tuple of ``(slot name, [values])``."""
        raise NotImplementedError("Please rewrite this function to return a list or tuple: "
                                  "[(name, [feasign, ...]), ...] or ((name, [feasign, ...]), ...)")

    def generate_batch(self, samples: List[Any]) -> Callable[[], Iterator[Any]]:
        """Override to rework a run of samples together (padding to the longest, say): a function
        returning an iterator over the samples to write. By default, ``samples`` as they are."""
        def local_iter() -> Iterator[Any]:
            yield from samples
        return local_iter


def _slots(line: Any, example: str) -> Sequence[Any]:
    if isinstance(line, zip):
        line = list(line)
    if not isinstance(line, (list, tuple)):
        raise ValueError(f"the output of process() must be in list or tuple type, got {type(line).__name__}; "
                         f"Example: {example}")
    return line


class MultiSlotStringDataGenerator(DataGenerator):
    """Slots of strings, written as they are: ``[("words", ["1926", "08"]), ("label", ["1"])]``
    gives ``2 1926 08 1 1``."""

    def _gen_str(self, line: Sequence[Tuple[str, List[str]]]) -> str:
        parts: List[str] = []
        for _name, elements in _slots(line, "[('words', ['1926', '08', '17']), ('label', ['1'])]"):
            parts.append(str(len(elements)))
            parts.extend(elements)
        return " ".join(parts) + "\n"


class MultiSlotDataGenerator(DataGenerator):
    """Slots of ints and floats: ``[("words", [1926, 8, 17]), ("label", [1])]`` gives
    ``3 1926 8 17 1 1``. Every sample has the first one's slots, in its order, none empty; a
    slot holding a float anywhere is a float slot (``_proto_info``: ``(name, "uint64"|"float")``)."""

    def _gen_str(self, line: Sequence[Tuple[str, List[float]]]) -> str:
        line = _slots(line, "[('words', [1926, 8, 17]), ('label', [1])]")
        known = self._proto_info
        if known is not None and len(line) != len(known):
            raise ValueError(f"the complete field set of two given line are inconsistent: {len(line)} "
                             f"slots, the first sample had {len(known)}")
        kinds: List[Tuple[str, str]] = []
        parts: List[str] = []
        for index, (name, elements) in enumerate(line):
            if not isinstance(name, str):
                raise ValueError(f"name{type(name)} must be in str type")
            if not isinstance(elements, list):
                raise ValueError(f"elements{type(elements)} must be in list type (slot {name!r})")
            if not elements:
                raise ValueError(f"the elements of each field can not be empty, you need padding it in "
                                 f"process() (slot {name!r})")
            if known is not None and name != known[index][0]:
                raise ValueError(f"the field name of two given line are not match: require<{known[index][0]}>, "
                                 f"get<{name}>.")
            kind = "uint64" if known is None else known[index][1]
            for elem in elements:
                if isinstance(elem, float):
                    kind = "float"
                elif not isinstance(elem, int):
                    raise ValueError(f"the type of element{type(elem)} must be in int or float (slot {name!r})")
            kinds.append((name, kind))
            parts.append(str(len(elements)))
            parts.extend(map(str, elements))
        self._proto_info = kinds
        return " ".join(parts) + "\n"
