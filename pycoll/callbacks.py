"""paddle.callbacks: ``from pycoll.callbacks import EarlyStopping`` (the classes live in pycoll.hapi)."""
from pycoll.hapi.callbacks import (Callback, EarlyStopping, LRScheduler, ModelCheckpoint, ProgBarLogger,
                                   ReduceLROnPlateau)

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "LRScheduler", "EarlyStopping", "ReduceLROnPlateau"]
