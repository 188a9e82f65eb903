"""The launcher under paddle's module name: ``python -m pycoll.distributed.launch`` runs
``pycoll.launch`` (see its ``__main__``).

``dist.launch`` is paddle's launcher function, but importing this package binds the package
itself to that name of ``pycoll.distributed`` (Python's import does so, whatever was bound
before). The package is therefore callable too: ``dist.launch()`` runs ``main.launch`` whatever
the order of the imports, as paddle's does. ``main`` is imported on the call only, so importing
this package stays cheap."""
import sys
import types


class _CallableLauncher(types.ModuleType):
    def __call__(self) -> None:
        from pycoll.distributed.launch.main import launch

        launch()


sys.modules[__name__].__class__ = _CallableLauncher
