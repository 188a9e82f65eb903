"""Nested structures (paddle.utils' ``flatten``, ``pack_sequence_as``, ``map_structure``,
``is_sequence``, ``assert_same_structure``, ``to_sequence``, ``hold_mutable_vars`` and
``copy_mutable_vars``, which decoding code and the RNN layers use): lists, tuples (named ones too)
and dicts nest; anything else, a string included, is a leaf. A dict's values go in the order of its
sorted keys, as paddle's do."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, List, Tuple


def is_sequence(seq: Any) -> bool:
    """Whether ``seq`` nests: a dict, or a sequence that is not a string."""
    return isinstance(seq, dict) or (isinstance(seq, Sequence) and not isinstance(seq, str))


def _children(nest: Any) -> list:
    return [nest[key] for key in sorted(nest)] if isinstance(nest, dict) else list(nest)


def flatten(nest: Any) -> List[Any]:
    """The leaves of ``nest``, depth first (a leaf alone: a list of it)."""
    if not is_sequence(nest):
        return [nest]
    return [leaf for child in _children(nest) for leaf in flatten(child)]


def pack_sequence_as(structure: Any, flat_sequence: Any) -> Any:
    """``flat_sequence``'s items put into ``structure``'s nesting (what `flatten` undoes);
    ValueError when their counts differ."""
    if not is_sequence(flat_sequence):
        raise TypeError(f"pack_sequence_as: flat_sequence must be a sequence, got {type(flat_sequence).__name__}")
    flat = list(flat_sequence)
    want = len(flatten(structure))
    if want != len(flat):
        raise ValueError(f"pack_sequence_as: structure has {want} elements, but flat_sequence has {len(flat)}")
    return _packed(structure, iter(flat))


def _packed(structure: Any, leaves: Any) -> Any:
    if not is_sequence(structure):
        return next(leaves)
    children = [_packed(child, leaves) for child in _children(structure)]
    if isinstance(structure, dict):
        by_key = dict(zip(sorted(structure), children))
        return type(structure)((key, by_key[key]) for key in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):  # a namedtuple
        return type(structure)(*children)
    return type(structure)(children)


def to_sequence(nest: Any) -> Any:
    """``nest`` if it nests, else a list of it alone."""
    return nest if is_sequence(nest) else [nest]


def hold_mutable_vars(structure: Any) -> bool:
    """Whether an item of ``structure`` nests (a list, tuple or dict in it)."""
    return any(is_sequence(item) for item in structure)


def copy_mutable_vars(structure: Any) -> Any:
    """``structure`` rebuilt with new containers around the same leaves."""
    return pack_sequence_as(structure, list(flatten(structure)))


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True) -> None:
    """ValueError, naming the first place, where ``nest1`` and ``nest2`` nest differently; with
    ``check_types``, TypeError where two containers at one place differ in type."""
    mismatch = _first_difference(nest1, nest2, "nest1", "nest2")
    if mismatch:
        raise ValueError(f"assert_same_structure: the structures nest differently: {mismatch}")
    if check_types:
        pairs: List[Tuple[Any, Any, str]] = [(nest1, nest2, "")]
        while pairs:
            x, y, at = pairs.pop()
            if is_sequence(x):
                if type(x) is not type(y):
                    raise TypeError(f"assert_same_structure: nest1{at} is a {type(x).__name__}, nest2{at} a "
                                    f"{type(y).__name__}")
                keys = sorted(x) if isinstance(x, dict) else range(len(x))
                pairs.extend((cx, cy, f"{at}[{k!r}]") for k, cx, cy in zip(keys, _children(x), _children(y)))


def map_structure(func: Callable[..., Any], *structure: Any) -> Any:
    """``func`` over the leaves of equally nested structures, in the first one's nesting;
    ValueError naming the first place where they nest differently."""
    if not structure:
        raise TypeError("map_structure: give at least one structure")
    for i, other in enumerate(structure[1:], 1):
        mismatch = _first_difference(structure[0], other, "structure[0]", f"structure[{i}]")
        if mismatch:
            raise ValueError(f"map_structure: the structures nest differently: {mismatch}")
    leaves = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*items) for items in zip(*leaves)])


def _first_difference(a: Any, b: Any, a_name: str, b_name: str) -> str:
    """Where ``a`` and ``b`` first nest differently ('' if nowhere)."""
    pairs: List[Tuple[Any, Any, str]] = [(a, b, "")]
    while pairs:
        x, y, at = pairs.pop()
        if is_sequence(x) != is_sequence(y) or (is_sequence(x) and len(x) != len(y)):
            def kind(v: Any) -> str:
                return f"a {type(v).__name__} of {len(v)}" if is_sequence(v) else f"a leaf ({type(v).__name__})"
            return f"{a_name}{at} is {kind(x)}, {b_name}{at} {kind(y)}"
        if is_sequence(x):
            keys = sorted(x) if isinstance(x, dict) else range(len(x))
            pairs.extend((cx, cy, f"{at}[{k!r}]") for k, cx, cy in zip(keys, _children(x), _children(y)))
    return ""
