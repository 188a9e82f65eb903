"""paddle's ``flex_checkpoint.dcp``: ``sharded_weight``, ``load_state_dict`` and
``save_state_dict``, each the module path of ``pycoll.distributed.checkpoint``'s objects."""
