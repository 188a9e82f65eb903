"""Reduction operators shared by every backend.

As in paddle, ``ReduceOp`` is a namespace of int constants (cheap to pass and to hash on the
hot path of every collective); ``op_name`` turns one back into its name for messages.
"""


class ReduceOp:
    """How a reducing collective combines the ranks' values."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_NAMES = {v: k for k, v in vars(ReduceOp).items() if k.isupper()}


def is_reduce_op(op: object) -> bool:
    return type(op) is int and op in _NAMES


def op_name(op: int) -> str:
    """``"ReduceOp.SUM"`` for ``ReduceOp.SUM``."""
    return f"ReduceOp.{_NAMES[op]}"


def not_a_reduce_op(op: object) -> str:
    return f"op={op!r} is not a ReduceOp; use ReduceOp.SUM, MAX, MIN, PROD or AVG"


def plan_error(op: object, why: str) -> Exception:
    """The exception an engine's ``plan`` raises: ValueError for an ``op`` that is not a
    ReduceOp, TypeError (the dtype cannot be reduced with it) otherwise."""
    return TypeError(why) if is_reduce_op(op) else ValueError(why)
