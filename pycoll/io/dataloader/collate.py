"""paddle.io.dataloader.collate: the collate functions."""
from pycoll.io.collate import default_collate_fn, default_convert_fn

__all__ = ["default_collate_fn", "default_convert_fn"]
