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
