"""paddle's module path ``paddle.distributed.flex_checkpoint``: its ``dcp`` modules name
``pycoll.distributed.checkpoint``'s objects (the same objects, not copies)."""
