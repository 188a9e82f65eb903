"""The launcher under paddle's module name: ``python -m pycoll.distributed.launch`` runs
``pycoll.launch`` (see its ``__main__``)."""
