"""paddle.nn.layer.container: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.container import LayerDict, LayerList, ParameterList, Sequential
from pycoll.nn.parameter_dict import ParameterDict

__all__ = ["LayerDict", "LayerList", "ParameterDict", "ParameterList", "Sequential"]
