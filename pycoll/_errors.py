"""Exceptions shared by every layer of pycoll."""


class CollectiveError(RuntimeError):
    """A collective could not complete: a timeout, a failed peer or an engine error.

    The message names the collective, the group and the ranks involved.
    """
