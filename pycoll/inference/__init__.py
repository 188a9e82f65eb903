"""``pycoll.inference``: paddle.inference's deployment API (``Config``, ``create_predictor``,
``Predictor`` and its input/output ``Tensor`` handles) over the Layers ``pycoll.jit.save`` keeps.

pycoll has no inference program: a predictor runs the saved Layer's own code, eagerly and
without a graph (see ``pycoll.inference.config`` and ``pycoll.inference.predictor``).
"""
from pycoll.inference.config import Config, PlaceType, PrecisionType
from pycoll.inference.predictor import (DataType, Predictor, PredictorPool, Tensor, create_predictor,
                                        get_num_bytes_of_data_type)
from pycoll.version import full_version

__all__ = ["Config", "DataType", "PlaceType", "PrecisionType", "Predictor", "PredictorPool", "Tensor",
           "create_predictor", "get_num_bytes_of_data_type", "get_version"]


def get_version() -> str:
    """The library's version, as paddle's inference reports its own."""
    return f"version: {full_version}\npycoll runs models kept by pycoll.jit.save"
