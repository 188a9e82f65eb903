"""paddle 3.3's alternative keyword names (torch-style ``input=``, ``dim=``, ``other=``, ``eps=``...).

TABLE was scanned (an AST walk of the package) from paddle 3.3.1's installed Python sources: every
function or method decorated with ``param_one_alias``, ``param_two_alias``, ``ParamAliasDecorator`` or
one of the fixed-renaming decorators of ``paddle/utils/decorator_utils.py``, as (paddle module:qualified
name, {alias: parameter}, public paths under ``paddle.``). Only the keyword renaming is kept here: the
decorators that also rewrite positional arguments (size_args_decorator, reshape/expand/transpose/
view/index_select/index_add decorators, lp_pool) contribute their keyword renames only.

For every public path pycoll has, a call with the alias gives what the call with the parameter's own
name gives, and giving both names raises (paddle raises ValueError or TypeError by API; pycoll's
ParamAliasConflict is both).
"""
import functools
import inspect

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

TABLE = [
    ("fft:fft", {"input": "x", "dim": "axis"}, ("fft.fft",)),
    ("fft:fft2", {"input": "x", "dim": "axes"}, ("fft.fft2",)),
    ("fft:fftn", {"input": "x", "dim": "axes"}, ("fft.fftn",)),
    ("fft:fftshift", {"input": "x", "dim": "axes"}, ("fft.fftshift",)),
    ("fft:hfft", {"input": "x", "dim": "axis"}, ("fft.hfft",)),
    ("fft:hfft2", {"input": "x", "dim": "axes"}, ("fft.hfft2",)),
    ("fft:hfftn", {"input": "x", "dim": "axes"}, ("fft.hfftn",)),
    ("fft:ifft", {"input": "x", "dim": "axis"}, ("fft.ifft",)),
    ("fft:ifft2", {"input": "x", "dim": "axes"}, ("fft.ifft2",)),
    ("fft:ifftn", {"input": "x", "dim": "axes"}, ("fft.ifftn",)),
    ("fft:ifftshift", {"input": "x", "dim": "axes"}, ("fft.ifftshift",)),
    ("fft:ihfft", {"input": "x", "dim": "axis"}, ("fft.ihfft",)),
    ("fft:ihfft2", {"input": "x", "dim": "axes"}, ("fft.ihfft2",)),
    ("fft:ihfftn", {"input": "x", "dim": "axes"}, ("fft.ihfftn",)),
    ("fft:irfft", {"input": "x", "dim": "axis"}, ("fft.irfft",)),
    ("fft:irfft2", {"input": "x", "dim": "axes"}, ("fft.irfft2",)),
    ("fft:irfftn", {"input": "x", "dim": "axes"}, ("fft.irfftn",)),
    ("fft:rfft", {"input": "x", "dim": "axis"}, ("fft.rfft",)),
    ("fft:rfft2", {"input": "x", "dim": "axes"}, ("fft.rfft2",)),
    ("fft:rfftn", {"input": "x", "dim": "axes"}, ("fft.rfftn",)),
    ("framework.dtype:finfo", {"type": "dtype"}, ("finfo",)),
    ("nn.functional.activation:glu", {"input": "x", "dim": "axis"}, ("nn.functional.glu",)),
    ("nn.functional.activation:hardshrink", {"input": "x", "lambd": "threshold"}, ("nn.functional.hardshrink",)),
    ("nn.functional.activation:log_sigmoid", {"input": "x"},
     ("nn.functional.log_sigmoid", "nn.functional.logsigmoid")),
    ("nn.functional.activation:silu", {"input": "x"}, ("nn.functional.silu",)),
    ("nn.functional.activation:softmax", {"input": "x", "dim": "axis"}, ("nn.functional.softmax",)),
    ("nn.functional.activation:softshrink", {"input": "x", "lambd": "threshold"}, ("nn.functional.softshrink",)),
    ("nn.functional.common:cosine_similarity", {"dim": "axis"}, ("nn.functional.cosine_similarity",)),
    ("nn.functional.common:dropout", {"input": "x"}, ("nn.functional.dropout",)),
    ("nn.functional.common:fold", {"input": "x", "output_size": "output_sizes", "kernel_size": "kernel_sizes",
                                   "stride": "strides", "padding": "paddings", "dilation": "dilations"},
     ("nn.functional.fold",)),
    ("nn.functional.common:pad", {"input": "x"}, ("nn.functional.pad",)),
    ("nn.functional.conv:conv1d", {"input": "x"}, ("conv1d", "nn.functional.conv1d")),
    ("nn.functional.conv:conv2d", {"input": "x"}, ("conv2d", "nn.functional.conv2d")),
    ("nn.functional.conv:conv3d", {"input": "x"}, ("conv3d", "nn.functional.conv3d")),
    ("nn.functional.distance:pairwise_distance", {"x1": "x", "x2": "y", "eps": "epsilon"},
     ("nn.functional.pairwise_distance",)),
    ("nn.functional.input:embedding", {"input": "x"}, ("nn.functional.embedding",)),
    ("nn.functional.input:one_hot", {"input": "x"}, ("nn.functional.one_hot",)),
    ("nn.functional.loss:cross_entropy", {"target": "label"}, ("nn.functional.cross_entropy",)),
    ("nn.functional.norm:layer_norm", {"input": "x", "eps": "epsilon"}, ("layer_norm", "nn.functional.layer_norm")),
    ("nn.functional.norm:normalize", {"input": "x", "dim": "axis", "eps": "epsilon"}, ("nn.functional.normalize",)),
    ("nn.functional.pooling:adaptive_avg_pool1d", {"input": "x"},
     ("adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool1d")),
    ("nn.functional.pooling:adaptive_avg_pool2d", {"input": "x"}, ("nn.functional.adaptive_avg_pool2d",)),
    ("nn.functional.pooling:adaptive_avg_pool3d", {"input": "x"}, ("nn.functional.adaptive_avg_pool3d",)),
    ("nn.functional.pooling:adaptive_max_pool1d", {"input": "x", "return_indices": "return_mask"},
     ("nn.functional.adaptive_max_pool1d",)),
    ("nn.functional.pooling:adaptive_max_pool2d", {"input": "x", "return_indices": "return_mask"},
     ("nn.functional.adaptive_max_pool2d",)),
    ("nn.functional.pooling:adaptive_max_pool3d", {"input": "x", "return_indices": "return_mask"},
     ("nn.functional.adaptive_max_pool3d",)),
    ("nn.functional.pooling:lp_pool1d", {"input": "x"}, ("nn.functional.lp_pool1d",)),
    ("nn.functional.pooling:lp_pool2d", {"input": "x"}, ("nn.functional.lp_pool2d",)),
    ("nn.layer.activation:GLU.__init__", {"dim": "axis"}, ("nn.GLU.__init__",)),
    ("nn.layer.activation:GLU.forward", {"input": "x"}, ("nn.GLU.forward",)),
    ("nn.layer.activation:Hardshrink.__init__", {"lambd": "threshold"}, ("nn.Hardshrink.__init__",)),
    ("nn.layer.activation:Hardshrink.forward", {"input": "x"}, ("nn.Hardshrink.forward",)),
    ("nn.layer.activation:Softshrink.__init__", {"lambd": "threshold"}, ("nn.Softshrink.__init__",)),
    ("nn.layer.activation:Softshrink.forward", {"input": "x"}, ("nn.Softshrink.forward",)),
    ("nn.layer.common:CosineSimilarity.__init__", {"dim": "axis"}, ("nn.CosineSimilarity.__init__",)),
    ("nn.layer.common:Embedding.forward", {"input": "x"}, ("nn.Embedding.forward",)),
    ("nn.layer.common:Fold.__init__", {"output_size": "output_sizes", "kernel_size": "kernel_sizes",
                                       "stride": "strides", "padding": "paddings", "dilation": "dilations"},
     ("nn.Fold.__init__",)),
    ("nn.layer.common:UpsamplingBilinear2D.forward", {"input": "x"},
     ("nn.UpsamplingBilinear2D.forward", "nn.UpsamplingBilinear2d.forward")),
    ("nn.layer.common:UpsamplingNearest2D.forward", {"input": "x"},
     ("nn.UpsamplingNearest2D.forward", "nn.UpsamplingNearest2d.forward")),
    ("nn.layer.common:_PadnD.forward", {"input": "x"},
     ("nn.CircularPad1D.forward", "nn.CircularPad1d.forward", "nn.CircularPad2D.forward",
      "nn.CircularPad2d.forward", "nn.CircularPad3D.forward", "nn.CircularPad3d.forward",
      "nn.ConstantPad1D.forward", "nn.ConstantPad1d.forward", "nn.ConstantPad2D.forward",
      "nn.ConstantPad2d.forward", "nn.ConstantPad3D.forward", "nn.ConstantPad3d.forward", "nn.Pad1D.forward",
      "nn.Pad2D.forward", "nn.Pad3D.forward", "nn.ReflectionPad1D.forward", "nn.ReflectionPad1d.forward",
      "nn.ReflectionPad2D.forward", "nn.ReflectionPad2d.forward", "nn.ReflectionPad3D.forward",
      "nn.ReflectionPad3d.forward", "nn.ReplicationPad1D.forward", "nn.ReplicationPad1d.forward",
      "nn.ReplicationPad2D.forward", "nn.ReplicationPad2d.forward", "nn.ReplicationPad3D.forward",
      "nn.ReplicationPad3d.forward", "nn.ZeroPad1D.forward", "nn.ZeroPad1d.forward", "nn.ZeroPad2D.forward",
      "nn.ZeroPad2d.forward", "nn.ZeroPad3D.forward", "nn.ZeroPad3d.forward")),
    ("nn.layer.container:LayerDict.__init__", {"modules": "sublayers"},
     ("nn.LayerDict.__init__", "nn.ModuleDict.__init__")),
    ("nn.layer.container:LayerDict.update", {"modules": "sublayers"},
     ("nn.LayerDict.update", "nn.ModuleDict.update")),
    ("nn.layer.container:LayerList.__init__", {"modules": "sublayers"},
     ("nn.LayerList.__init__", "nn.ModuleList.__init__")),
    ("nn.layer.container:LayerList.append", {"module": "sublayer"}, ("nn.LayerList.append", "nn.ModuleList.append")),
    ("nn.layer.container:LayerList.extend", {"modules": "sublayers"},
     ("nn.LayerList.extend", "nn.ModuleList.extend")),
    ("nn.layer.container:LayerList.insert", {"module": "sublayer"}, ("nn.LayerList.insert", "nn.ModuleList.insert")),
    ("nn.layer.conv:Conv1D.forward", {"input": "x"}, ("nn.Conv1D.forward", "nn.Conv1d.forward")),
    ("nn.layer.conv:Conv2D.forward", {"input": "x"}, ("nn.Conv2D.forward", "nn.Conv2d.forward")),
    ("nn.layer.conv:Conv3D.forward", {"input": "x"}, ("nn.Conv3D.forward", "nn.Conv3d.forward")),
    ("nn.layer.distance:PairwiseDistance.__init__", {"eps": "epsilon"}, ("nn.PairwiseDistance.__init__",)),
    ("nn.layer.distance:PairwiseDistance.forward", {"x1": "x", "x2": "y"}, ("nn.PairwiseDistance.forward",)),
    ("nn.layer.layers:Layer.buffers", {"recurse": "include_sublayers"}, ("nn.Layer.buffers", "nn.Module.buffers")),
    ("nn.layer.layers:Layer.named_buffers", {"recurse": "include_sublayers"},
     ("nn.Layer.named_buffers", "nn.Module.named_buffers")),
    ("nn.layer.layers:Layer.named_parameters", {"recurse": "include_sublayers"},
     ("nn.Layer.named_parameters", "nn.Module.named_parameters")),
    ("nn.layer.layers:Layer.parameters", {"recurse": "include_sublayers"},
     ("nn.Layer.parameters", "nn.Module.parameters")),
    ("nn.layer.layers:Layer.register_buffer", {"persistent": "persistable"},
     ("nn.Layer.register_buffer", "nn.Module.register_buffer")),
    ("nn.layer.layers:Layer.set_sublayer", {"module": "layer"},
     ("nn.Layer.set_sublayer", "nn.Layer.set_submodule", "nn.Module.set_sublayer", "nn.Module.set_submodule")),
    ("nn.layer.loss:CrossEntropyLoss.forward", {"target": "label"}, ("nn.CrossEntropyLoss.forward",)),
    ("nn.layer.loss:SmoothL1Loss.forward", {"target": "label"}, ("nn.HuberLoss.forward", "nn.SmoothL1Loss.forward")),
    ("nn.layer.norm:GroupNorm.__init__", {"eps": "epsilon"}, ("nn.GroupNorm.__init__",)),
    ("nn.layer.norm:LayerNorm.__init__", {"eps": "epsilon"}, ("nn.LayerNorm.__init__",)),
    ("nn.layer.pooling:AdaptiveAvgPool2D.forward", {"input": "x"},
     ("nn.AdaptiveAvgPool2D.forward", "nn.AdaptiveAvgPool2d.forward")),
    ("nn.layer.pooling:AdaptiveAvgPool3D.forward", {"input": "x"},
     ("nn.AdaptiveAvgPool3D.forward", "nn.AdaptiveAvgPool3d.forward")),
    ("nn.layer.pooling:AdaptiveMaxPool1D.__init__", {"return_indices": "return_mask"},
     ("nn.AdaptiveMaxPool1D.__init__", "nn.AdaptiveMaxPool1d.__init__")),
    ("nn.layer.pooling:AdaptiveMaxPool2D.__init__", {"return_indices": "return_mask"},
     ("nn.AdaptiveMaxPool2D.__init__", "nn.AdaptiveMaxPool2d.__init__")),
    ("nn.layer.pooling:AdaptiveMaxPool2D.forward", {"input": "x"},
     ("nn.AdaptiveMaxPool2D.forward", "nn.AdaptiveMaxPool2d.forward")),
    ("nn.layer.pooling:AdaptiveMaxPool3D.__init__", {"return_indices": "return_mask"},
     ("nn.AdaptiveMaxPool3D.__init__", "nn.AdaptiveMaxPool3d.__init__")),
    ("nn.layer.pooling:AdaptiveMaxPool3D.forward", {"input": "x"},
     ("nn.AdaptiveMaxPool3D.forward", "nn.AdaptiveMaxPool3d.forward")),
    ("nn.layer.pooling:LPPool1D.forward", {"input": "x"}, ("nn.LPPool1D.forward", "nn.LPPool1d.forward")),
    ("nn.layer.pooling:LPPool2D.forward", {"input": "x"}, ("nn.LPPool2D.forward", "nn.LPPool2d.forward")),
    ("nn.layer.pooling:MaxUnPool1D.forward", {"input": "x"}, ("nn.MaxUnPool1D.forward", "nn.MaxUnpool1d.forward")),
    ("nn.layer.pooling:MaxUnPool2D.forward", {"input": "x"}, ("nn.MaxUnPool2D.forward", "nn.MaxUnpool2d.forward")),
    ("nn.layer.pooling:MaxUnPool3D.forward", {"input": "x"}, ("nn.MaxUnPool3D.forward", "nn.MaxUnpool3d.forward")),
    ("sparse.unary:reshape", {"input": "x"}, ("sparse.reshape",)),
    ("tensor.attribute:is_complex", {"input": "x"}, ("Tensor.is_complex", "is_complex")),
    ("tensor.attribute:is_floating_point", {"input": "x"}, ("Tensor.is_floating_point", "is_floating_point")),
    ("tensor.creation:empty", {"size": "shape"}, ("empty",)),
    ("tensor.creation:empty_like", {"input": "x"}, ("empty_like",)),
    ("tensor.creation:eye", {"n": "num_rows", "m": "num_columns"}, ("eye",)),
    ("tensor.creation:full", {"size": "shape"}, ("full",)),
    ("tensor.creation:full_like", {"input": "x"}, ("full_like",)),
    ("tensor.creation:linspace", {"end": "stop", "steps": "num"}, ("linspace",)),
    ("tensor.creation:ones", {"size": "shape"}, ("ones",)),
    ("tensor.creation:ones_like", {"input": "x"}, ("ones_like",)),
    ("tensor.creation:zeros", {"size": "shape"}, ("zeros",)),
    ("tensor.creation:zeros_like", {"input": "x"}, ("zeros_like",)),
    ("tensor.linalg:cross", {"dim": "axis"}, ("Tensor.cross", "cross", "linalg.cross")),
    ("tensor.linalg:norm", {"input": "x", "A": "x", "ord": "p", "dim": "axis"},
     ("Tensor.norm", "linalg.norm", "norm")),
    ("tensor.linalg:solve", {"A": "x", "B": "y"}, ("Tensor.solve", "linalg.solve")),
    ("tensor.linalg:transpose", {"input": "x"},
     ("Tensor.swapaxes", "Tensor.swapdims", "Tensor.transpose", "swapaxes", "swapdims", "transpose")),
    ("tensor.linalg:vector_norm", {"ord": "p", "dim": "axis"}, ("linalg.vector_norm",)),
    ("tensor.logic:bitwise_or", {"input": "x", "other": "y"}, ("Tensor.__or__", "Tensor.bitwise_or", "bitwise_or")),
    ("tensor.logic:bitwise_or_", {"input": "x", "other": "y"}, ("Tensor.bitwise_or_", "bitwise_or_")),
    ("tensor.logic:equal", {"input": "x", "other": "y"}, ("Tensor.eq", "Tensor.equal", "eq", "equal")),
    ("tensor.logic:greater_equal", {"input": "x", "other": "y"},
     ("Tensor.ge", "Tensor.greater_equal", "ge", "greater_equal")),
    ("tensor.logic:gt", {"input": "x", "other": "y"}, ("Tensor.greater", "Tensor.gt", "greater", "gt")),
    ("tensor.logic:is_tensor", {"obj": "x"}, ("Tensor.is_tensor", "is_tensor")),
    ("tensor.logic:less_equal", {"input": "x", "other": "y"}, ("Tensor.le", "Tensor.less_equal", "le", "less_equal")),
    ("tensor.logic:less_than", {"input": "x", "other": "y"},
     ("Tensor.less", "Tensor.less_than", "Tensor.lt", "less", "less_than", "lt")),
    ("tensor.logic:not_equal", {"input": "x", "other": "y"}, ("Tensor.ne", "Tensor.not_equal", "ne", "not_equal")),
    ("tensor.manipulation:broadcast_to", {"input": "x", "size": "shape"}, ("Tensor.broadcast_to", "broadcast_to")),
    ("tensor.manipulation:chunk", {"input": "x", "dim": "axis"}, ("Tensor.chunk", "chunk")),
    ("tensor.manipulation:concat", {"tensors": "x", "dim": "axis"},
     ("Tensor.concat", "cat", "concat", "concatenate")),
    ("tensor.manipulation:expand", {"input": "x", "size": "shape"}, ("Tensor.expand", "expand")),
    ("tensor.manipulation:flatten", {"input": "x", "start_dim": "start_axis", "end_dim": "stop_axis"},
     ("Tensor.flatten", "flatten")),
    ("tensor.manipulation:index_add", {"input": "x", "dim": "axis", "source": "value"},
     ("Tensor.index_add", "index_add")),
    ("tensor.manipulation:index_add_", {"input": "x", "dim": "axis", "source": "value"},
     ("Tensor.index_add_", "index_add_")),
    ("tensor.manipulation:repeat_interleave", {"input": "x", "dim": "axis"},
     ("Tensor.repeat_interleave", "repeat_interleave")),
    ("tensor.manipulation:reshape", {"input": "x"}, ("Tensor.reshape", "reshape")),
    ("tensor.manipulation:squeeze", {"input": "x", "dim": "axis"}, ("Tensor.squeeze", "squeeze")),
    ("tensor.manipulation:stack", {"tensors": "x", "dim": "axis"}, ("Tensor.stack", "stack")),
    ("tensor.manipulation:take_along_axis", {"input": "arr", "dim": "axis"},
     ("Tensor.take_along_axis", "Tensor.take_along_dim", "take_along_axis", "take_along_dim")),
    ("tensor.manipulation:tensor_split", {"input": "x", "dim": "axis", "indices_or_sections": "num_or_indices",
                                          "indices": "num_or_indices", "sections": "num_or_indices"},
     ("Tensor.tensor_split", "tensor_split")),
    ("tensor.manipulation:tile", {"input": "x", "dims": "repeat_times"}, ("Tensor.tile", "tile")),
    ("tensor.manipulation:unbind", {"dim": "axis"}, ("Tensor.unbind", "unbind")),
    ("tensor.manipulation:unflatten", {"input": "x", "dim": "axis", "sizes": "shape"},
     ("Tensor.unflatten", "unflatten")),
    ("tensor.manipulation:unfold", {"dimension": "axis"}, ("Tensor.unfold", "unfold")),
    ("tensor.manipulation:unique_consecutive", {"input": "x", "dim": "axis"},
     ("Tensor.unique_consecutive", "unique_consecutive")),
    ("tensor.manipulation:unsqueeze", {"input": "x", "dim": "axis"}, ("Tensor.unsqueeze", "unsqueeze")),
    ("tensor.manipulation:view", {"dtype": "shape_or_dtype", "size": "shape_or_dtype"}, ("Tensor.view", "view")),
    ("tensor.math:add", {"input": "x", "other": "y"}, ("Tensor.add", "add")),
    ("tensor.math:add_", {"input": "x", "other": "y"}, ("Tensor.add_",)),
    ("tensor.math:clip", {"input": "x"}, ("Tensor.clamp", "Tensor.clip", "clamp", "clip")),
    ("tensor.math:cumprod", {"input": "x"}, ("Tensor.cumprod", "cumprod")),
    ("tensor.math:cumsum", {"input": "x", "dim": "axis"}, ("Tensor.cumsum", "cumsum")),
    ("tensor.math:diff", {"input": "x", "dim": "axis"}, ("Tensor.diff", "diff")),
    ("tensor.math:divide", {"input": "x", "other": "y"}, ("Tensor.div", "Tensor.divide", "div", "divide")),
    ("tensor.math:divide_", {"input": "x", "other": "y"}, ("Tensor.div_", "Tensor.divide_", "div_", "divide_")),
    ("tensor.math:floor_divide", {"input": "x", "other": "y"}, ("Tensor.floor_divide", "floor_divide")),
    ("tensor.math:frac", {"input": "x"}, ("Tensor.frac", "frac")),
    ("tensor.math:gcd", {"input": "x", "other": "y"}, ("Tensor.gcd", "gcd")),
    ("tensor.math:gcd_", {"input": "x", "other": "y"}, ("Tensor.gcd_", "gcd_")),
    ("tensor.math:isin", {"elements": "x", "test_elements": "test_x"}, ("Tensor.isin", "isin")),
    ("tensor.math:lcm", {"input": "x", "other": "y"}, ("Tensor.lcm", "lcm")),
    ("tensor.math:lcm_", {"input": "x", "other": "y"}, ("Tensor.lcm_", "lcm_")),
    ("tensor.math:mul", {"input": "x", "other": "y"}, ("Tensor.mul", "mul")),
    ("tensor.math:multiply_", {"input": "x", "other": "y"}, ("Tensor.mul_", "Tensor.multiply_", "multiply_")),
    ("tensor.math:outer", {"input": "x", "vec2": "y"}, ("Tensor.outer", "ger", "outer")),
    ("tensor.math:pow", {"input": "x", "exponent": "y"}, ("Tensor.pow", "pow")),
    ("tensor.math:prod", {"input": "x", "dim": "axis"}, ("Tensor.prod", "prod")),
    ("tensor.math:remainder", {"input": "x", "other": "y"},
     ("Tensor.floor_mod", "Tensor.mod", "Tensor.remainder", "floor_mod", "mod", "remainder")),
    ("tensor.math:subtract", {"input": "x", "other": "y"}, ("Tensor.sub", "Tensor.subtract", "sub", "subtract")),
    ("tensor.math:subtract_", {"input": "x", "other": "y"}, ("Tensor.sub_", "Tensor.subtract_", "sub_", "subtract_")),
    ("tensor.math:trace", {"input": "x"}, ("Tensor.trace", "trace")),
    ("tensor.random:exponential_", {"lambd": "lam"}, ("Tensor.exponential_",)),
    ("tensor.random:multinomial", {"input": "x"}, ("Tensor.multinomial", "multinomial")),
    ("tensor.random:normal", {"size": "shape"}, ("normal",)),
    ("tensor.random:rand", {"size": "shape"}, ("rand",)),
    ("tensor.random:randn", {"size": "shape"}, ("randn",)),
    ("tensor.random:randn_like", {"input": "x"}, ("randn_like",)),
    ("tensor.random:uniform_", {"from": "min", "to": "max"}, ("Tensor.uniform_",)),
    ("tensor.search:argsort", {"input": "x", "dim": "axis"}, ("Tensor.argsort", "argsort")),
    ("tensor.search:bucketize", {"input": "x", "boundaries": "sorted_sequence"}, ("Tensor.bucketize", "bucketize")),
    ("tensor.search:index_select", {"input": "x", "dim": "axis"}, ("Tensor.index_select", "index_select")),
    ("tensor.search:masked_select", {"input": "x"}, ("Tensor.masked_select", "masked_select")),
    ("tensor.search:nonzero", {"input": "x"}, ("Tensor.nonzero", "nonzero")),
    ("tensor.search:searchsorted", {"input": "values"}, ("searchsorted",)),
    ("tensor.search:topk", {"input": "x", "dim": "axis"}, ("Tensor.topk", "topk")),
    ("tensor.search:where", {"input": "x", "other": "y"}, ("Tensor.where", "where")),
    ("tensor.stat:mean", {"input": "x", "dim": "axis"}, ("Tensor.mean", "mean")),
    ("tensor.stat:median", {"input": "x", "dim": "axis"}, ("Tensor.median", "median")),
    ("tensor.stat:quantile", {"input": "x", "dim": "axis"}, ("Tensor.quantile", "quantile")),
    ("tensor.stat:var", {"input": "x", "dim": "axis"}, ("Tensor.var", "var")),
]


def _resolve(path):
    obj = pycoll
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# --- small operands, made fresh for every call (in-place ops write into them) ---------------------
def A():
    return pycoll.to_tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])


def B():
    return pycoll.to_tensor([[2.0, 1.0, -3.0], [1.5, 2.0, 0.5]])


def I():  # noqa: E743 - integers
    return pycoll.to_tensor([[12, 18, 5], [7, 0, 9]])


def J():
    return pycoll.to_tensor([[8, 12, 15], [21, 4, 3]])


def R(*shape):
    """arange-based floats of `shape`, not symmetric so that a wrong axis shows."""
    n = int(np.prod(shape))
    return pycoll.to_tensor(((np.arange(n) * 7 % 11) - 4.5).reshape(shape).astype("float32"))


def _ids(*values):
    return pycoll.to_tensor(np.array(values, dtype="int64"))


XY = lambda: dict(x=A(), y=B())  # noqa: E731
IJ = lambda: dict(x=I(), y=J())  # noqa: E731

# kwargs of a call under the parameters' own names, per decorated paddle function; the first key is the
# one a Tensor method binds to self
CALLS = {
    "fft:fft": lambda: dict(x=A(), axis=0),
    "fft:ifft": lambda: dict(x=A(), axis=0),
    "fft:rfft": lambda: dict(x=A(), axis=0),
    "fft:irfft": lambda: dict(x=A(), axis=0),
    "fft:hfft": lambda: dict(x=A(), axis=0),
    "fft:ihfft": lambda: dict(x=A(), axis=0),
    "fft:fft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:ifft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:rfft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:irfft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:hfft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:ihfft2": lambda: dict(x=A(), axes=(1, 0)),
    "fft:fftn": lambda: dict(x=A(), axes=[0]),
    "fft:ifftn": lambda: dict(x=A(), axes=[0]),
    "fft:rfftn": lambda: dict(x=A(), axes=[0]),
    "fft:irfftn": lambda: dict(x=A(), axes=[0]),
    "fft:hfftn": lambda: dict(x=A(), axes=[0]),
    "fft:ihfftn": lambda: dict(x=A(), axes=[0]),
    "fft:fftshift": lambda: dict(x=A(), axes=[1]),
    "fft:ifftshift": lambda: dict(x=A(), axes=[1]),
    "framework.dtype:finfo": lambda: dict(dtype="float16"),
    "nn.functional.activation:glu": lambda: dict(x=R(2, 4), axis=0),
    "nn.functional.activation:hardshrink": lambda: dict(x=A(), threshold=1.6),
    "nn.functional.activation:softshrink": lambda: dict(x=A(), threshold=1.6),
    "nn.functional.activation:log_sigmoid": lambda: dict(x=A()),
    "nn.functional.activation:silu": lambda: dict(x=A()),
    "nn.functional.activation:softmax": lambda: dict(x=A(), axis=0),
    "nn.functional.common:cosine_similarity": lambda: dict(x1=A(), x2=B(), axis=0),
    "nn.functional.common:dropout": lambda: dict(x=R(4, 5), p=0.5, training=True),
    "nn.functional.common:fold": lambda: dict(x=R(1, 4, 4), output_sizes=[3, 3], kernel_sizes=2, strides=1,
                                              paddings=0, dilations=1),
    "nn.functional.common:pad": lambda: dict(x=R(1, 1, 2, 3), pad=[1, 0, 0, 2]),
    "nn.functional.conv:conv1d": lambda: dict(x=R(1, 2, 5), weight=R(3, 2, 2)),
    "nn.functional.conv:conv2d": lambda: dict(x=R(1, 2, 4, 4), weight=R(3, 2, 2, 2)),
    "nn.functional.conv:conv3d": lambda: dict(x=R(1, 1, 3, 3, 3), weight=R(2, 1, 2, 2, 2)),
    "nn.functional.distance:pairwise_distance": lambda: dict(x=A(), y=B(), epsilon=0.5),
    "nn.functional.input:embedding": lambda: dict(x=_ids([0, 2], [1, 0]), weight=R(3, 2)),
    "nn.functional.input:one_hot": lambda: dict(x=_ids(0, 2, 1), num_classes=4),
    "nn.functional.loss:cross_entropy": lambda: dict(input=A(), label=_ids([2], [0])),
    "nn.functional.norm:layer_norm": lambda: dict(x=A(), normalized_shape=3, epsilon=0.001),
    "nn.functional.norm:normalize": lambda: dict(x=A(), axis=0, epsilon=0.5),
    "nn.functional.pooling:adaptive_avg_pool1d": lambda: dict(x=R(1, 2, 6), output_size=3),
    "nn.functional.pooling:adaptive_avg_pool2d": lambda: dict(x=R(1, 1, 4, 4), output_size=2),
    "nn.functional.pooling:adaptive_avg_pool3d": lambda: dict(x=R(1, 1, 2, 4, 4), output_size=2),
    "nn.functional.pooling:adaptive_max_pool1d": lambda: dict(x=R(1, 2, 6), output_size=3, return_mask=True),
    "nn.functional.pooling:adaptive_max_pool2d": lambda: dict(x=R(1, 1, 4, 4), output_size=2, return_mask=True),
    "nn.functional.pooling:adaptive_max_pool3d": lambda: dict(x=R(1, 1, 2, 4, 4), output_size=2,
                                                              return_mask=True),
    "nn.functional.pooling:lp_pool1d": lambda: dict(x=R(1, 2, 6), norm_type=2, kernel_size=2),
    "nn.functional.pooling:lp_pool2d": lambda: dict(x=R(1, 1, 4, 4), norm_type=3, kernel_size=2, stride=1),
    "tensor.attribute:is_complex": lambda: dict(x=A()),
    "tensor.attribute:is_floating_point": lambda: dict(x=I()),
    "tensor.creation:empty": lambda: dict(shape=[2, 3]),
    "tensor.creation:empty_like": lambda: dict(x=A()),
    "tensor.creation:eye": lambda: dict(num_rows=2, num_columns=3),
    "tensor.creation:full": lambda: dict(shape=[2], fill_value=1.5),
    "tensor.creation:full_like": lambda: dict(x=A(), fill_value=2.5),
    "tensor.creation:linspace": lambda: dict(start=0.0, stop=1.0, num=5),
    "tensor.creation:ones": lambda: dict(shape=[2, 3]),
    "tensor.creation:ones_like": lambda: dict(x=I()),
    "tensor.creation:zeros": lambda: dict(shape=[3]),
    "tensor.creation:zeros_like": lambda: dict(x=I()),
    "tensor.linalg:cross": lambda: dict(x=A(), y=B(), axis=1),
    "tensor.linalg:norm": lambda: dict(x=A(), p=1, axis=1),
    "tensor.linalg:solve": lambda: dict(x=pycoll.to_tensor([[2.0, 1.0], [1.0, 3.0]]),
                                        y=pycoll.to_tensor([[1.0], [2.0]])),
    "tensor.linalg:transpose": lambda: dict(x=A(), perm=[1, 0]),
    "tensor.linalg:vector_norm": lambda: dict(x=A(), p=1, axis=1),
    "tensor.logic:bitwise_or": IJ,
    "tensor.logic:bitwise_or_": IJ,
    "tensor.logic:equal": XY,
    "tensor.logic:greater_equal": XY,
    "tensor.logic:gt": XY,
    "tensor.logic:is_tensor": lambda: dict(x=A()),
    "tensor.logic:less_equal": XY,
    "tensor.logic:less_than": XY,
    "tensor.logic:not_equal": XY,
    "tensor.manipulation:broadcast_to": lambda: dict(x=pycoll.to_tensor([1.0, 2.0, 3.0]), shape=[2, 3]),
    "tensor.manipulation:chunk": lambda: dict(x=A(), chunks=3, axis=1),
    "tensor.manipulation:concat": lambda: dict(x=[A(), B()], axis=1),
    "tensor.manipulation:expand": lambda: dict(x=pycoll.to_tensor([1.0, 2.0, 3.0]), shape=[2, 3]),
    "tensor.manipulation:flatten": lambda: dict(x=R(2, 3, 4), start_axis=1, stop_axis=2),
    "tensor.manipulation:index_add": lambda: dict(x=A(), index=_ids(0, 2), axis=1, value=R(2, 2)),
    "tensor.manipulation:index_add_": lambda: dict(x=A(), index=_ids(0, 2), axis=1, value=R(2, 2)),
    "tensor.manipulation:repeat_interleave": lambda: dict(x=A(), repeats=2, axis=1),
    "tensor.manipulation:reshape": lambda: dict(x=A(), shape=[3, 2]),
    "sparse.unary:reshape": lambda: dict(x=A().to_sparse_coo(2), shape=[3, 2]),
    "tensor.manipulation:squeeze": lambda: dict(x=R(2, 1, 3), axis=1),
    "tensor.manipulation:stack": lambda: dict(x=[A(), B()], axis=1),
    "tensor.manipulation:take_along_axis": lambda: dict(arr=A(), indices=_ids([0], [2]), axis=1),
    "tensor.manipulation:tensor_split": lambda: dict(x=A(), num_or_indices=3, axis=1),
    "tensor.manipulation:tile": lambda: dict(x=A(), repeat_times=[2, 1]),
    "tensor.manipulation:unbind": lambda: dict(input=A(), axis=1),
    "tensor.manipulation:unflatten": lambda: dict(x=R(2, 6), axis=1, shape=[2, 3]),
    "tensor.manipulation:unique_consecutive": lambda: dict(x=pycoll.to_tensor([[1, 1, 2], [1, 1, 2]]), axis=1),
    "tensor.manipulation:unsqueeze": lambda: dict(x=A(), axis=1),
    "tensor.manipulation:view": lambda: dict(x=A(), shape_or_dtype=[3, 2]),
    "tensor.math:add": XY,
    "tensor.math:add_": XY,
    "tensor.math:clip": lambda: dict(x=A(), min=-1.0, max=2.0),
    "tensor.math:cumprod": lambda: dict(x=A(), dim=1),
    "tensor.math:cumsum": lambda: dict(x=A(), axis=1),
    "tensor.math:diff": lambda: dict(x=A(), axis=0),
    "tensor.manipulation:unfold": lambda: dict(x=A(), axis=1, size=2, step=1),
    "tensor.math:divide": XY,
    "tensor.math:divide_": XY,
    "tensor.math:floor_divide": XY,
    "tensor.math:frac": lambda: dict(x=A()),
    "tensor.math:gcd": IJ,
    "tensor.math:gcd_": IJ,
    "tensor.math:isin": lambda: dict(x=A(), test_x=B()),
    "tensor.math:lcm": IJ,
    "tensor.math:lcm_": IJ,
    "tensor.math:mul": XY,
    "tensor.math:multiply_": XY,
    "tensor.math:outer": lambda: dict(x=pycoll.to_tensor([1.0, 2.0]), y=pycoll.to_tensor([3.0, -1.0, 0.5])),
    "tensor.math:pow": lambda: dict(x=A(), y=3),
    "tensor.math:prod": lambda: dict(x=A(), axis=1),
    "tensor.math:remainder": XY,
    "tensor.math:subtract": XY,
    "tensor.math:subtract_": XY,
    "tensor.math:trace": lambda: dict(x=A()),
    "tensor.random:multinomial": lambda: dict(x=pycoll.to_tensor([0.2, 0.3, 0.5]), num_samples=4, replacement=True),
    "tensor.random:normal": lambda: dict(mean=1.0, std=2.0, shape=[2, 3]),
    "tensor.random:rand": lambda: dict(shape=[2, 3]),
    "tensor.random:randn": lambda: dict(shape=[2, 3]),
    "tensor.random:randn_like": lambda: dict(x=A()),
    "tensor.random:uniform_": lambda: dict(x=A(), min=-1.0, max=3.0),
    "tensor.search:argsort": lambda: dict(x=A(), axis=0),
    "tensor.search:bucketize": lambda: dict(x=A(), sorted_sequence=pycoll.to_tensor([0.0, 1.0, 2.0])),
    "tensor.search:index_select": lambda: dict(x=A(), index=_ids(2, 0), axis=1),
    "tensor.search:masked_select": lambda: dict(x=A(), mask=A() > 0),
    "tensor.search:nonzero": lambda: dict(x=A() > 0),
    "tensor.search:searchsorted": lambda: dict(sorted_sequence=pycoll.to_tensor([0.0, 1.0, 2.0]), values=A()),
    "tensor.search:topk": lambda: dict(x=A(), k=1, axis=0),
    "tensor.random:exponential_": lambda: dict(x=A(), lam=2.0),
    "tensor.search:where": lambda: dict(condition=A() > 0, x=A(), y=B()),
    "tensor.stat:mean": lambda: dict(x=A(), axis=1),
    "tensor.stat:median": lambda: dict(x=R(2, 4), axis=1, mode="min"),  # the alias brings mode='min'
    "tensor.stat:quantile": lambda: dict(x=A(), q=0.25, axis=1),
    "tensor.stat:var": lambda: dict(x=A(), axis=1),
}

_L1, _L2, _L3 = nn.Linear(2, 2), nn.ReLU(), nn.Tanh()  # sublayers the containers hold (by identity)


def _after(make, method, probe):
    """A call of `make()`'s `method`, which returns nothing, observed through `probe(instance)`."""
    def call(**kw):
        instance = make()
        getattr(instance, method)(**kw)
        return probe(instance)
    return call


def _sublayer_list(layer):
    return [id(s) for s in layer.children()]


def _unpool_call(dims):
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
    out, mask = pool(R(1, 1, *([4] * dims)), 2, return_mask=True)
    return dict(x=out, indices=mask)


_PAD_SHAPES = {"1D": (1, 1, 3), "2D": (1, 1, 2, 2), "3D": (1, 1, 2, 2, 2)}  # by the name's last two letters

# (callable, kwargs) of a layer's __init__, forward or method, given the public class
LAYER_CALLS = {
    "nn.layer.activation:GLU.__init__": lambda cls: (cls, dict(axis=0)),
    "nn.layer.activation:GLU.forward": lambda cls: (cls(), dict(x=R(2, 4))),
    "nn.layer.activation:Hardshrink.__init__": lambda cls: (cls, dict(threshold=1.6)),
    "nn.layer.activation:Hardshrink.forward": lambda cls: (cls(), dict(x=A())),
    "nn.layer.activation:Softshrink.__init__": lambda cls: (cls, dict(threshold=1.6)),
    "nn.layer.activation:Softshrink.forward": lambda cls: (cls(), dict(x=A())),
    "nn.layer.common:CosineSimilarity.__init__": lambda cls: (cls, dict(axis=0)),
    "nn.layer.common:Embedding.forward": lambda cls: (cls(3, 2), dict(x=_ids([0, 2], [1, 0]))),
    "nn.layer.common:Fold.__init__": lambda cls: (cls, dict(output_sizes=[3, 3], kernel_sizes=2, strides=1,
                                                            paddings=0, dilations=1)),
    "nn.layer.common:UpsamplingBilinear2D.forward": lambda cls: (cls(scale_factor=2), dict(x=R(1, 1, 2, 2))),
    "nn.layer.common:UpsamplingNearest2D.forward": lambda cls: (cls(scale_factor=2), dict(x=R(1, 1, 2, 2))),
    "nn.layer.common:_PadnD.forward": lambda cls: (cls(1, 0.0) if cls.__name__.startswith("ConstantPad") else cls(1),
                                                   dict(x=R(*_PAD_SHAPES[cls.__name__[-2:]]))),
    "nn.layer.container:LayerDict.__init__": lambda cls: (cls, dict(sublayers={"a": _L1, "b": _L2})),
    "nn.layer.container:LayerDict.update": lambda cls: (
        _after(lambda: cls({"a": _L1}), "update", _sublayer_list), dict(sublayers={"b": _L2, "a": _L3})),
    "nn.layer.container:LayerList.__init__": lambda cls: (cls, dict(sublayers=[_L1, _L2])),
    "nn.layer.container:LayerList.append": lambda cls: (_after(lambda: cls([_L1]), "append", _sublayer_list),
                                                        dict(sublayer=_L2)),
    "nn.layer.container:LayerList.extend": lambda cls: (_after(lambda: cls([_L1]), "extend", _sublayer_list),
                                                        dict(sublayers=[_L2, _L3])),
    "nn.layer.container:LayerList.insert": lambda cls: (_after(lambda: cls([_L1, _L2]), "insert", _sublayer_list),
                                                        dict(index=1, sublayer=_L3)),
    "nn.layer.conv:Conv1D.forward": lambda cls: (cls(2, 3, 2), dict(x=R(1, 2, 5))),
    "nn.layer.conv:Conv2D.forward": lambda cls: (cls(2, 3, 2), dict(x=R(1, 2, 4, 4))),
    "nn.layer.conv:Conv3D.forward": lambda cls: (cls(1, 2, 2), dict(x=R(1, 1, 3, 3, 3))),
    "nn.layer.distance:PairwiseDistance.__init__": lambda cls: (cls, dict(epsilon=0.5)),
    "nn.layer.distance:PairwiseDistance.forward": lambda cls: (cls(), dict(x=A(), y=B())),
    "nn.layer.layers:Layer.buffers": lambda cls: (nn.Sequential(nn.BatchNorm1D(2)).buffers,
                                                  dict(include_sublayers=False)),
    "nn.layer.layers:Layer.named_buffers": lambda cls: (nn.Sequential(nn.BatchNorm1D(2)).named_buffers,
                                                        dict(include_sublayers=True)),
    "nn.layer.layers:Layer.named_parameters": lambda cls: (nn.Sequential(nn.Linear(2, 3)).named_parameters,
                                                           dict(include_sublayers=True)),
    "nn.layer.layers:Layer.parameters": lambda cls: (nn.Sequential(nn.Linear(2, 3)).parameters,
                                                     dict(include_sublayers=False)),
    "nn.layer.layers:Layer.register_buffer": lambda cls: (
        _after(cls, "register_buffer", lambda layer: sorted(layer.state_dict())),
        dict(name="b", tensor=A(), persistable=False)),
    "nn.layer.layers:Layer.set_sublayer": lambda cls: (
        _after(lambda: nn.Sequential(nn.Linear(2, 2)), "set_sublayer", lambda layer: type(layer[0]).__name__),
        dict(target="0", layer=nn.Tanh())),
    "nn.layer.loss:CrossEntropyLoss.forward": lambda cls: (cls(), dict(input=A(), label=_ids([2], [0]))),
    "nn.layer.loss:SmoothL1Loss.forward": lambda cls: (cls(), dict(input=A(), label=B())),
    "nn.layer.norm:GroupNorm.__init__": lambda cls: (cls, dict(num_groups=1, num_channels=2, epsilon=0.5)),
    "nn.layer.norm:LayerNorm.__init__": lambda cls: (cls, dict(normalized_shape=3, epsilon=0.5)),
    "nn.layer.pooling:AdaptiveAvgPool2D.forward": lambda cls: (cls(2), dict(x=R(1, 1, 4, 4))),
    "nn.layer.pooling:AdaptiveAvgPool3D.forward": lambda cls: (cls(2), dict(x=R(1, 1, 2, 4, 4))),
    "nn.layer.pooling:AdaptiveMaxPool1D.__init__": lambda cls: (cls, dict(output_size=2, return_mask=True)),
    "nn.layer.pooling:AdaptiveMaxPool2D.__init__": lambda cls: (cls, dict(output_size=2, return_mask=True)),
    "nn.layer.pooling:AdaptiveMaxPool2D.forward": lambda cls: (cls(2), dict(x=R(1, 1, 4, 4))),
    "nn.layer.pooling:AdaptiveMaxPool3D.__init__": lambda cls: (cls, dict(output_size=2, return_mask=True)),
    "nn.layer.pooling:LPPool1D.forward": lambda cls: (cls(2, 2), dict(x=R(1, 2, 6))),
    "nn.layer.pooling:LPPool2D.forward": lambda cls: (cls(2, 2), dict(x=R(1, 1, 4, 4))),
    "nn.layer.pooling:AdaptiveMaxPool3D.forward": lambda cls: (cls(2), dict(x=R(1, 1, 2, 4, 4))),
    "nn.layer.pooling:MaxUnPool1D.forward": lambda cls: (cls(2), _unpool_call(1)),
    "nn.layer.pooling:MaxUnPool2D.forward": lambda cls: (cls(2), _unpool_call(2)),
    "nn.layer.pooling:MaxUnPool3D.forward": lambda cls: (cls(2), _unpool_call(3)),
}
_UNSEEN_VALUES = {"tensor.creation:empty", "tensor.creation:empty_like"}  # only shape and dtype are defined


def _call(key, path):
    """(callable, kwargs under the parameters' own names, self parameter or None) for `path`."""
    if key in LAYER_CALLS:
        cls_path, _, method = path.rpartition(".")
        fn, kw = LAYER_CALLS[key](_resolve(cls_path))
        return fn, kw, None
    kw = CALLS[key]()
    if path.startswith("Tensor."):
        self_name = next(iter(kw))
        this, method = kw.pop(self_name), path.split(".", 1)[1]
        if isinstance(this, (list, tuple)):  # Tensor.concat / Tensor.stack: called on the class with the list
            return functools.partial(getattr(pycoll.Tensor, method), this), kw, self_name
        return getattr(this, method), kw, self_name
    return _resolve(path), kw, None


def _same(a, b):
    if getattr(a, "is_sparse", lambda: False)():
        assert getattr(b, "is_sparse", lambda: False)()
        a, b = a.to_dense(), b.to_dense()
    if isinstance(a, pycoll.Tensor):
        assert isinstance(b, pycoll.Tensor) and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, nn.Layer):
        assert type(a) is type(b)
        plain = (int, float, bool, tuple, list, type(None))
        assert {k: v for k, v in vars(a).items() if isinstance(v, plain)} == \
            {k: v for k, v in vars(b).items() if isinstance(v, plain)}
        assert _sublayer_list(a) == _sublayer_list(b)
        _same(list(a.state_dict().values()), list(b.state_dict().values()))
    elif isinstance(a, (list, tuple)) or inspect.isgenerator(a):
        a, b = list(a), list(b)
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, pycoll.finfo):
        assert vars(a) == vars(b)
    else:
        assert a == b


PRESENT = [(key, aliases, path) for key, aliases, paths in TABLE for path in paths if _resolve(path) is not None]
CASES = [(key, path, alias, name) for key, aliases, path in PRESENT for alias, name in aliases.items()
         if not (path.startswith("Tensor.") and name == next(iter(CALLS[key]())))]  # self: not a keyword


def test_every_api_pycoll_has_from_the_table_has_a_call_here():
    # an API added to pycoll later (pycoll.fft, nn.Conv2d...) fails here until it takes the aliases
    # and gets a call below
    assert {key for key, _, _ in PRESENT} == set(CALLS) | set(LAYER_CALLS)


@pytest.mark.parametrize("key,path,alias,name", CASES, ids=[f"{c[1]}:{c[2]}" for c in CASES])
def test_alias_gives_the_same_result(key, path, alias, name):
    pycoll.seed(5)
    fn, kw, _ = _call(key, path)
    assert name in kw, f"the call for {key} must give {name!r} by keyword"
    expected = fn(**kw)
    pycoll.seed(5)
    fn, kw, _ = _call(key, path)
    got = fn(**{alias if k == name else k: v for k, v in kw.items()})
    if key in _UNSEEN_VALUES:
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    else:
        _same(got, expected)


CONFLICTS = list({(c[0], c[1]): c for c in CASES}.values())  # one alias per public path


@pytest.mark.parametrize("key,path,alias,name", CONFLICTS, ids=[f"{c[1]}:{c[2]}" for c in CONFLICTS])
def test_giving_both_names_raises(key, path, alias, name):
    fn, kw, _ = _call(key, path)
    with pytest.raises(TypeError, match=f"both '{name}' and its alias '{alias}'") as info:
        fn(**kw, **{alias: kw[name]})
    assert isinstance(info.value, ValueError)  # paddle's ParamAliasDecorator raises ValueError


def test_wrappers_keep_the_signature_and_only_keywords_are_renamed():
    for key, aliases, path in PRESENT:
        obj = _resolve(path)
        obj = obj.__init__ if isinstance(obj, type) else obj
        sig = inspect.signature(obj)
        if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            continue  # a forwarder (Tensor.sub -> Tensor.subtract): the target renames
        assert set(aliases.values()) <= set(sig.parameters), path
        assert not set(aliases) & set(sig.parameters), path
        assert hasattr(obj, "__wrapped__"), path
    x = A()
    with pytest.raises(TypeError):  # positional arguments keep their places: axis twice
        pycoll.topk(x, 1, 0, dim=1)
    np.testing.assert_array_equal(pycoll.concat([x, x], dim=1).numpy(), np.concatenate([x.numpy()] * 2, 1))


def test_median_with_torch_names_takes_mode_min_as_paddle():
    x = pycoll.to_tensor([[1.5, -2.0, 3.0, 0.0], [0.5, 4.0, -1.0, 2.0]])
    values, indices = pycoll.median(x, dim=1)  # paddle 3.3.1: [0., 0.5], [3, 0]
    np.testing.assert_array_equal(values.numpy(), [0.0, 0.5])
    np.testing.assert_array_equal(indices.numpy(), [3, 0])
    np.testing.assert_array_equal(pycoll.median(x, axis=1).numpy(), [0.75, 1.25])  # paddle's mode='avg'
    values, indices = x.median(dim=0)  # paddle 3.3.1: [0.5, -2., -1., 0.], [1, 0, 1, 0]
    np.testing.assert_array_equal(values.numpy(), [0.5, -2.0, -1.0, 0.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0, 1, 0])


def test_torch_names_paddle_takes_on_its_operator_bindings():
    """Paddle 3.3.1 also takes these through its C++ operator bindings, not the decorators the
    table was scanned from (each call below was run on paddle 3.3.1 by a probe)."""
    x = pycoll.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = pycoll.to_tensor(np.ones((3, 2), np.float32))
    same = [
        (pycoll.sum(input=x, dim=0), pycoll.sum(x, axis=0)),
        (pycoll.sum(x, dim=1, keepdim=True), pycoll.sum(x, axis=1, keepdim=True)),
        (x.sum(dim=1), x.sum(axis=1)),
        (pycoll.amax(x, dim=1), pycoll.amax(x, axis=1)),
        (pycoll.logsumexp(x, dim=1), pycoll.logsumexp(x, axis=1)),
        (pycoll.argmax(x, dim=1, keepdim=True), pycoll.argmax(x, axis=1, keepdim=True)),
        (pycoll.argmin(input=x, dim=0), pycoll.argmin(x, axis=0)),
        (pycoll.all(x > 0, dim=1), pycoll.all(x > 0, axis=1)),
        (pycoll.any(x > 4, dim=0), pycoll.any(x > 4, axis=0)),
        (pycoll.matmul(input=x, other=y), pycoll.matmul(x, y)),
        (x.matmul(other=y), x.matmul(y)),
        (pycoll.bmm(input=x.unsqueeze(0), mat2=y.unsqueeze(0)), pycoll.bmm(x.unsqueeze(0), y.unsqueeze(0))),
        (pycoll.multiply(input=x, other=x), x * x),
        (pycoll.maximum(x, other=x * 0 + 2), pycoll.maximum(x, x * 0 + 2)),
        (pycoll.logical_and(x > 1, other=x < 4), pycoll.logical_and(x > 1, x < 4)),
        (pycoll.roll(x, shifts=1, dims=1), pycoll.roll(x, 1, axis=1)),
        (pycoll.abs(input=x), pycoll.abs(x)), (pycoll.exp(input=x), pycoll.exp(x)),
        (pycoll.sqrt(input=x), pycoll.sqrt(x)),
        (pycoll.nn.functional.gelu(input=x), pycoll.nn.functional.gelu(x)),
        (pycoll.nn.functional.interpolate(input=x.reshape([1, 1, 2, 3]), scale_factor=2),
         pycoll.nn.functional.interpolate(x.reshape([1, 1, 2, 3]), scale_factor=2)),
        # a sweep calling every function of pycoll and pycoll.nn.functional with input= on both
        *[(getattr(pycoll, n)(input=x / 6), getattr(pycoll, n)(x / 6))
          for n in ("sin", "cos", "asin", "acos", "sinh", "cosh", "atanh", "log1p", "log2", "log10", "expm1",
                    "rsqrt", "ceil", "floor", "sign", "round", "tanh", "log", "sigmoid", "isnan", "isinf",
                    "isfinite", "logical_not")],
        (pycoll.acosh(input=x + 1), pycoll.acosh(x + 1)),
        (pycoll.amin(input=x, dim=1), pycoll.amin(x, axis=1)),
        (pycoll.minimum(input=x, other=x * 0 + 2), pycoll.minimum(x, x * 0 + 2)),
        (pycoll.isclose(input=x, other=x + 1e-9), pycoll.isclose(x, x + 1e-9)),
        (pycoll.dot(input=x[0], y=x[1]), pycoll.dot(x[0], x[1])),
        (pycoll.diagonal(input=x, offset=1, dim1=0, dim2=1), pycoll.diagonal(x, 1, 0, 1)),
        (x.diagonal(dim1=1, dim2=0), x.diagonal(axis1=1, axis2=0)),
        (pycoll.triu(input=x, diagonal=1), pycoll.triu(x, 1)), (pycoll.tril(input=x), pycoll.tril(x)),
        (pycoll.expand_as(input=x[:1], other=x), pycoll.expand_as(x[:1], x)),
        (pycoll.index_put(input=x, indices=(pycoll.to_tensor([0]),), values=pycoll.to_tensor(9.0)),
         pycoll.index_put(x, (pycoll.to_tensor([0]),), pycoll.to_tensor(9.0))),
        (pycoll.nn.functional.sigmoid(input=x), pycoll.nn.functional.sigmoid(x)),
        (pycoll.nn.functional.tanh(input=x), pycoll.nn.functional.tanh(x)),
        (pycoll.nn.functional.softplus(input=x), pycoll.nn.functional.softplus(x)),
        (pycoll.nn.functional.grid_sample(input=x.reshape([1, 1, 2, 3]), grid=pycoll.zeros([1, 2, 2, 2])),
         pycoll.nn.functional.grid_sample(x.reshape([1, 1, 2, 3]), pycoll.zeros([1, 2, 2, 2]))),
    ]
    for got, want in same:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(TypeError):
        pycoll.sum(x, axis=0, dim=0)


def test_clip_with_neither_bound_is_x_and_in_place_forms_take_input():
    # paddle 3.3.1 (measured): clip(x), x.clip() and clamp(input=x) give x; trunc_(input=x) works
    x = pycoll.to_tensor([[0.5, -2.0, 3.0]], stop_gradient=False)
    for got in (pycoll.clip(x), x.clip(), pycoll.clamp(input=x)):
        assert got.numpy().tolist() == [[0.5, -2.0, 3.0]] and got is not x
    pycoll.clip(x).sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 1.0, 1.0]]
    y = pycoll.to_tensor([[0.5, -2.5, 3.0]])
    assert pycoll.trunc_(input=y) is y and y.numpy().tolist() == [[0.0, -2.0, 3.0]]
