"""Exceptions shared by every layer of pycoll."""


class CollectiveError(RuntimeError):
    """A collective could not complete: a timeout, a failed peer or an engine error.

    The message names the collective, the group and the ranks involved.
    """


class NotInitializedError(RuntimeError, ValueError):
    """A collective called before ``init_parallel_env``. Paddle raises RuntimeError here and pycoll
    raised ValueError before; the class is both, so either ``except`` catches it."""


class NotAMemberError(ValueError, RuntimeError):
    """A call that needs this rank in a group it is not in (or a group destroyed): a ValueError
    naming the group, and the RuntimeError paddle raises there (``get_backend``)."""


class LabelOutOfRange(IndexError, ValueError):
    """A class id outside a loss's classes: the IndexError paddle and torch raise there, and the
    ValueError pycoll raised before; the class is both."""


class RefusedArgument(ValueError, RuntimeError):
    """A bad argument where paddle raises RuntimeError (``P2POp``'s op, ``use_calc_stream`` with
    ``sync_op=False``) and torch, like pycoll's other checks, ValueError: the class is both."""


class AssertedArgument(ValueError, AssertionError):
    """A bad argument where paddle asserts (``MultiHeadAttention``'s embed_dim not divisible by
    num_heads, ``group_sharded_parallel``'s level): the AssertionError paddle raises and the
    ValueError pycoll raised before; the class is both."""
