"""paddle.callbacks: ``from pycoll.callbacks import EarlyStopping`` (the classes live in pycoll.hapi)."""
from pycoll.hapi.callbacks import (Callback, EarlyStopping, LRScheduler, ModelCheckpoint, ProgBarLogger,
                                   ReduceLROnPlateau)
from pycoll.hapi.tracking_callbacks import VisualDL, WandbCallback

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "VisualDL", "LRScheduler", "EarlyStopping",
           "ReduceLROnPlateau", "WandbCallback"]
