"""``pycoll.callbacks`` (paddle.callbacks): the callbacks ``Model.fit``, ``evaluate`` and
``predict`` accept, and how ``Model`` completes the user's list with its own."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from pycoll.hapi.callback_base import Callback, CallbackList
from pycoll.hapi.progress import ProgBarLogger
from pycoll.hapi.train_callbacks import EarlyStopping, LRScheduler, ModelCheckpoint, ReduceLROnPlateau

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "LRScheduler", "EarlyStopping", "ReduceLROnPlateau"]


def config_callbacks(callbacks: Union[Sequence[Callback], Callback, None] = None, model: Any = None,
                     batch_size: Optional[int] = None, epochs: Optional[int] = None, steps: Optional[int] = None,
                     log_freq: int = 2, verbose: int = 2, save_freq: int = 1, save_dir: Optional[str] = None,
                     metrics: Optional[List[str]] = None, mode: str = "train") -> CallbackList:
    """The callbacks of one run, as paddle makes them: the user's, after a ``ProgBarLogger``
    (unless one is given or ``verbose`` is 0) and before a ``ModelCheckpoint`` and an
    ``LRScheduler`` (unless given); ``EarlyStopping`` callbacks get ``save_dir``."""
    given = list(callbacks if isinstance(callbacks, (list, tuple)) else [callbacks] if callbacks else [])
    for c in given:
        if not isinstance(c, Callback):
            raise TypeError(f"callbacks: {c!r} is a {type(c).__name__}; each must be a pycoll.callbacks.Callback")
    if verbose and not any(isinstance(c, ProgBarLogger) for c in given):
        given.insert(0, ProgBarLogger(log_freq, verbose=verbose))
    if not any(isinstance(c, ModelCheckpoint) for c in given):
        given.append(ModelCheckpoint(save_freq, save_dir))
    for c in given:
        if isinstance(c, EarlyStopping):
            c.save_dir = save_dir
    if not any(isinstance(c, LRScheduler) for c in given):
        given.append(LRScheduler())
    cbks = CallbackList(given)
    cbks.set_model(model)
    cbks.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                     "metrics": (metrics or []) if mode != "test" else []})
    return cbks
