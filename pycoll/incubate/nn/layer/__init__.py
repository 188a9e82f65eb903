"""The layers of ``paddle.incubate.nn``, each a thin owner of parameters over
``pycoll.incubate.nn.functional`` (paddle's parameter names and shapes, so its state_dicts load)."""
