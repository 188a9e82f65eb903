"""paddle's MultiSlot text format: each line holds, for every slot in ``use_var`` order, a count
and that many values. pycoll has no static variables, so a slot is described by a :class:`Slot`
(or a ``(name, dtype, lod_level)`` tuple, or a dict with those keys): ``dtype`` ``"int64"`` or
``"float32"``, as paddle's ``use_var`` variables' dtypes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

import numpy as np

DTYPES = ("int64", "float32")


@dataclass(frozen=True)
class Slot:
    name: str
    dtype: str = "int64"
    lod_level: int = 1


def as_slots(use_var: Sequence[Any]) -> List[Slot]:
    """``use_var`` as Slots; ValueError naming the entry that is not one."""
    slots = []
    for i, var in enumerate(use_var):
        if isinstance(var, dict):
            var = Slot(**var)
        elif isinstance(var, (tuple, list)):
            var = Slot(*var)
        elif not isinstance(var, Slot) and hasattr(var, "name") and hasattr(var, "dtype"):
            var = Slot(var.name, str(var.dtype), getattr(var, "lod_level", 1))
        if not isinstance(var, Slot) or var.dtype not in DTYPES:
            raise ValueError(f"use_var[{i}]={var!r}: give a Slot(name, dtype, lod_level) with dtype "
                             f"one of {DTYPES}")
        slots.append(var)
    if len({s.name for s in slots}) != len(slots):
        raise ValueError(f"use_var: slot names repeat: {[s.name for s in slots]}")
    return slots


def _feature_ids(values: List[bytes]) -> np.ndarray:
    """int64 values: paddle reads feature ids as uint64, so a hashed id of 2**63 or more is kept,
    as the int64 of the same bits (paddle's feed holds them so)."""
    try:
        return np.array(values, np.int64)
    except OverflowError:
        return np.array(values, np.uint64).view(np.int64)


def _values(values: List[bytes], dtype: str) -> np.ndarray:
    return _feature_ids(values) if dtype == "int64" else np.array(values, dtype)


def parse(line: bytes, slots: List[Slot], where: str, lead: Sequence[str] = ()) -> List[np.ndarray]:
    """The values of each slot on ``line``; ValueError naming ``where`` (file:line) otherwise.
    ``lead``: the settings whose field comes first, each as ``1 <value>`` (``parse_ins_id``,
    ``parse_content``)."""
    fields = line.split()
    values, at = [], 0
    for setting in lead:
        if fields[at:at + 1] != [b"1"] or len(fields) < at + 2:
            raise ValueError(f"{where}: with {setting}=True a line starts with '1 <value>' "
                             f"({'the instance id' if setting == 'parse_ins_id' else 'the content'}); "
                             f"it has {b' '.join(fields[at:at + 2]).decode(errors='replace')!r}")
        at += 2
    for slot in slots:
        try:
            count = int(fields[at])
        except IndexError:
            raise ValueError(f"{where}: slot {slot.name!r} is missing (the line has {len(fields)} "
                             f"fields)") from None
        except ValueError:
            raise ValueError(f"{where}: slot {slot.name!r}: the count {fields[at]!r} is not an "
                             f"integer") from None
        if count == 0:  # paddle's reader refuses it too: a padded id would read as a real one
            raise ValueError(f"{where}: slot {slot.name!r} has 0 values; the number of ids can not be "
                             f"zero: pad it in the data generator")
        if count < 0 or at + 1 + count > len(fields):
            raise ValueError(f"{where}: slot {slot.name!r} says {count} values but the line has "
                             f"{len(fields) - at - 1} left")
        try:
            values.append(_values(fields[at + 1:at + 1 + count], slot.dtype))
        except (ValueError, OverflowError):
            raise ValueError(f"{where}: slot {slot.name!r}: a value is not a number of dtype "
                             f"{slot.dtype}") from None
        at += 1 + count
    if at != len(fields):
        raise ValueError(f"{where}: {len(fields) - at} values after the last slot")
    return values


def checked(raw: List[bytes], slots: List[Slot], where: str, first: int = 0,
            lead: Sequence[str] = ()) -> List[bytes]:
    """The non-blank lines of ``raw`` (a block of a file's lines, the first being line ``first + 1``
    of ``where``), stripped, once each is known to hold ``slots``: the counts are walked line by
    line, the values converted in one ``np.array`` per dtype (the conversion :func:`parse` makes per
    slot, about twice as fast over a block). When anything is wrong the block is parsed again line
    by line, so the error is :func:`parse`'s, naming the file and line. The ``lead`` fields
    (:func:`parse`) are checked and left out of the lines returned: pycoll's records hold the
    slots alone."""
    lines = [line for line in map(bytes.strip, raw) if line]
    by_dtype: Dict[str, List[bytes]] = {dtype: [] for dtype in DTYPES}
    columns = [by_dtype[slot.dtype] for slot in slots]
    skip = 2 * len(lead)
    try:
        for i, line in enumerate(lines):
            fields = line.split()
            if skip:
                if fields[0:skip:2] != [b"1"] * len(lead):
                    raise ValueError(line)
                fields = fields[skip:]
                lines[i] = b" ".join(fields)
            at, size = 0, len(fields)
            for column in columns:
                count = int(fields[at])
                end = at + 1 + count
                if count < 1 or end > size:
                    raise ValueError(line)
                column += fields[at + 1:end]
                at = end
            if at != size:
                raise ValueError(line)
        for dtype, values in by_dtype.items():
            _values(values, dtype)
    except (ValueError, IndexError, OverflowError):
        for number, line in enumerate(raw, first + 1):
            line = line.strip()
            if line:
                parse(line, slots, f"{where}:{number}", lead)
        raise
    return lines


def batch(records: List[List[np.ndarray]], slots: List[Slot]) -> Dict[str, Any]:
    """A batch: for each slot its values padded with zeros to the longest record
    (``[batch, longest]``) and each record's count (``<name>.lengths``, ``[batch]``), as Tensors."""
    from pycoll.tensor import to_tensor

    out: Dict[str, Any] = {}
    for k, slot in enumerate(slots):
        lengths = np.array([len(r[k]) for r in records], np.int64)
        padded = np.zeros((len(records), max(int(lengths.max()), 1)), slot.dtype)
        for row, record in enumerate(records):
            padded[row, :len(record[k])] = record[k]
        out[slot.name], out[f"{slot.name}.lengths"] = to_tensor(padded), to_tensor(lengths)
    return out
