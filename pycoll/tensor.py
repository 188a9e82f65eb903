"""`pycoll.Tensor`: a NumPy or CuPy array with autograd, and `to_tensor` (its dtypes are
`pycoll.dtypes`').

A Tensor owns nothing but its array (`Tensor.array`, zero-copy). Every op (`pycoll.math_ops`,
`pycoll.shape_ops`) computes on raw arrays with the array's own module and, when the graph is
being recorded, gives its output a backward function (see `pycoll._tensor_ops.op_output` and
`pycoll._graph`, whose `GraphTensor` protocol Tensor implements). The creation functions are in
`pycoll.creation`.

This module imports no op module: the ops attach themselves to Tensor as methods and operators
(`x + y`, `x[i]`, `x.sum()`) when they are imported, which `import pycoll` does, so the import graph
has no circle.
"""
from __future__ import annotations

import copy as _copy
import itertools
import sys
import types
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import numpy as np

from pycoll import _graph, _versions
from pycoll._errors import AssertedArgument
from pycoll._graph import RemovableHandle
from pycoll._printing import format_body
from pycoll._sparse_rows import forget_rows
from pycoll.device import (PlaceObject, array_module, current_place, is_array, move, parse_place, place_of,
                           to_module)
from pycoll.device.places import CPUPlace
from pycoll.dtypes import DTypeLike, is_bfloat16
from pycoll.size import Size, TensorSize, size_of, tensor_size
from pycoll.tensor_data import array_from, constructor_array


def run_grad_hooks(hooks: Dict[int, Callable[["Tensor"], Any]], g: Any) -> Any:
    """``g`` (a gradient array) after each of ``hooks`` in turn (``register_hook``'s, run under
    no_grad); a hook's None keeps it, a Tensor or array of g's shape replaces it."""
    for hook in list(hooks.values()):
        with _graph.no_grad():
            out = hook(wrap(g))
        if out is None:
            continue
        arr = out._array if isinstance(out, Tensor) else out
        if not is_array(arr) or arr.shape != g.shape:
            raise ValueError(f"a gradient hook must return None or a Tensor of the gradient's shape "
                             f"{list(g.shape)}, got {type(out).__name__}"
                             + (f" of shape {list(arr.shape)}" if is_array(arr) else ""))
        g = arr
    return g


class _InplaceVersion:
    """``Tensor._inplace_version``: paddle's method, ``t._inplace_version()`` is
    ``t.inplace_version``; assigning ``t._inplace_version = n`` sets the count (how constructors
    that build a Tensor without ``_init_slots`` start it)."""

    def __get__(self, t: Any, owner: Any = None) -> Any:
        if t is None:
            return self
        return lambda: t._version

    def __set__(self, t: Any, value: int) -> None:
        t._version = int(value)


# Tensor attributes a pickle leaves out: hooks (closures), a view's base tensor, bookkeeping of
# the graph and of the profiler
_NOT_PICKLED = frozenset({"_grad_hooks", "_view", "_retains_grads", "_profiled_call"})


_EAGER_IDS = itertools.count()  # the names of tensors that are not parameters: eager_tmp_0, ...

class Tensor:
    """An n-d array (numpy.ndarray on the CPU, cupy.ndarray on a GPU) that records autograd.

    `stop_gradient` is True for plain tensors (paddle's default) and False for parameters; `.grad`
    is a Tensor (stop_gradient False, as paddle's) or None, and backward accumulates into it until clear_grad().
    `grad_node` and `output_index` place the tensor in the autograd graph (`pycoll._graph`).
    """

    # __dict__: a result can become a distributed tensor in place (auto_parallel's propagation)
    __slots__ = ("_array", "stop_gradient", "_grad", "grad_node", "output_index", "_ready_hooks",
                 "_name", "_version", "__weakref__", "__dict__")
    __array_ufunc__ = None  # numpy operators defer to Tensor's reflected methods (ndarray * Tensor)
    # paddle's answers for a tensor that is not distributed (auto_parallel's DistTensor sets its own)
    placements = None
    process_mesh = None
    __hash__ = object.__hash__  # hashed by identity, although math_ops gives it an elementwise ==

    def __init__(self, *args: Any, **kwargs: Any):
        """``Tensor(data, dtype=None, place=None, stop_gradient=True)`` (a copy of data, as
        paddle's; ``zero_copy=True`` shares an array's memory), ``Tensor(2, 3)`` (an uninitialised
        tensor of that shape) or ``Tensor()``: see `pycoll.tensor_data.constructor_array`."""
        array, stop_gradient, extras = constructor_array(args, kwargs)
        _init_slots(self, array)
        self.stop_gradient = stop_gradient
        for key, value in extras.items():  # name, persistable
            setattr(self, key, value)

    # ---- the array and its properties -----------------------------------------------------
    @property
    def array(self) -> Any:
        """The backing numpy/cupy array itself: writing into it writes the tensor."""
        return self._array

    @property
    def shape(self) -> Size:
        """The shape: a `pycoll.Size`, a list of ints that also equals the tuple (paddle's)."""
        return size_of(self._array.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> TensorSize:
        """The number of elements, an int; ``x.size()`` is the shape and ``x.size(i)`` one
        dimension's size (paddle 3.3's)."""
        a = self._array
        return tensor_size(a.shape, a.size)

    @property
    def place(self) -> PlaceObject:
        """Where the tensor lives: ``Place(cpu)`` or ``Place(gpu:N)`` (it also equals 'cpu' / 'gpu:N')."""
        a = self._array
        return _CPU if isinstance(a, np.ndarray) else PlaceObject(place_of(a))

    @property
    def is_leaf(self) -> bool:
        return self.grad_node is None

    @property
    def grad(self) -> Optional["Tensor"]:
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._grad = None
            return
        arr = value._array if isinstance(value, Tensor) else value
        if not is_array(arr):
            raise TypeError(f"grad must be a Tensor, an array or None, got {type(value).__name__}")
        if arr.shape != self._array.shape:
            raise ValueError(f"grad must have the tensor's shape {self.shape}, got {list(arr.shape)}")
        self._grad = grad_tensor(arr)

    def is_dist(self) -> bool:
        """Whether this is a distributed tensor (auto_parallel's DistTensor): not this one."""
        return False

    def _grad_ivar(self) -> Optional["Tensor"]:
        """``grad`` under the name paddle's own examples read it by."""
        return self._grad

    # ---- interop -----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A NumPy array: the same memory on the CPU, a host copy for a GPU tensor."""
        a = self._array
        return a if isinstance(a, np.ndarray) else a.get()

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    @property
    def __cuda_array_interface__(self) -> dict:
        if isinstance(self._array, np.ndarray):
            raise AttributeError("a CPU tensor has no __cuda_array_interface__")
        return self._array.__cuda_array_interface__

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._array.__dlpack__(*args, **kwargs)
        except BufferError as err:  # (NumPy exports no bfloat16: paddle's DLPack has it)
            raise BufferError(f"to_dlpack: this tensor's {self._array.dtype} cannot travel through "
                              f"{type(self._array).__module__.split('.')[0]}'s DLPack ({err}); cast it "
                              f"first, e.g. x.astype('float32')") from None

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self._array.__dlpack_device__()

    # The collectives' protocol (pycoll.distributed._arrays): they move the backing array in place
    # and hand back results of a Tensor argument as Tensors, without importing this module.
    def __pycoll_array__(self) -> Any:
        return self._array

    @classmethod
    def __pycoll_wrap__(cls, array: Any) -> "Tensor":
        return wrap(array)

    def item(self, *args: Any) -> Any:
        if not args and self._array.size != 1:  # (NumPy's message names no tensor; paddle's float() asserts)
            raise AssertedArgument(f"only one element tensors can be converted to Python scalars; this one has "
                                   f"shape {list(self._array.shape)} ({self._array.size} elements)")
        return self._array.item(*args)

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __format__(self, format_spec: str) -> str:
        """paddle's: a 0-d tensor formats as its number (``f"{loss:.3f}"``), others as ``str``."""
        if self._array.ndim == 0:
            return format(self.item(), format_spec)
        return object.__format__(self, format_spec)

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return bool(self._array.item())

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return (f"Tensor(shape={list(self._array.shape)}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient},\n       {format_body(self.numpy())})")

    @property
    def name(self) -> str:
        """The tensor's name: the one given (a parameter's, from its layer); else ``eager_tmp_N``,
        made when first read (paddle's) and kept apart from ``_name``, so that what keys by a
        given name (checkpoints, optimizer states: the key, ``param_i``) does not change once a
        name has been read."""
        if self._name is not None:
            return self._name
        made = self.__dict__.get("_eager_name")
        if made is None:
            made = self.__dict__["_eager_name"] = f"eager_tmp_{next(_EAGER_IDS)}"
        return made

    @name.setter
    def name(self, value: Optional[str]) -> None:
        self._name = value

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """A leaf with a copy of the value, ``stop_gradient`` and name, without ``.grad`` (paddle's:
        a deep-copied model starts with no gradients). An op's result (a loss kept in a dict, an
        activation a model holds) becomes such a leaf: its graph is not copied, as paddle's."""
        if self.grad_node is not None:
            new = memo[id(self)] = _copy.deepcopy(self.detach(), memo)
            new.stop_gradient = self.stop_gradient
            return new
        new = object.__new__(type(self))
        memo[id(self)] = new
        _init_slots(new, self._array.copy())
        new.stop_gradient = self.stop_gradient
        new._name = self._name
        if hasattr(self, "__dict__"):
            new.__dict__.update(_copy.deepcopy(self.__dict__, memo))
        return new

    def __copy__(self) -> "Tensor":
        """``copy.copy(x)``: as ``copy.deepcopy(x)``, a leaf with a copy of the value (paddle's;
        a tensor over the same memory would change with every in-place op on x)."""
        return self.__deepcopy__({})

    def __getstate__(self) -> tuple:
        """What pickle keeps: the value, ``stop_gradient``, ``name`` and any attributes; not
        ``.grad`` (paddle's and torch's pickles drop it too), the tensor's place in the autograd
        graph, its hooks (closures, which cannot be pickled) nor, for a view, the tensor it views
        (a view pickles as its own elements: ``all_gather_object({"loss": out[:, 0]})`` sends a
        column, not ``out``). So an op's result pickles, as paddle's does (object collectives send it)."""
        slots = {"_array": self._array, "stop_gradient": self.stop_gradient, "name": self._name}
        extra = {k: v for k, v in getattr(self, "__dict__", {}).items() if k not in _NOT_PICKLED}
        return extra or None, slots

    def __setstate__(self, state: tuple) -> None:
        extra, slots = state
        _init_slots(self, slots.pop("_array"))
        for name, value in slots.items():
            setattr(self, name, value)
        if extra:
            self.__dict__.update(extra)

    # ---- autograd ----------------------------------------------------------------------------
    def backward(self, grad_tensor: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every reachable leaf's `.grad`.

        A non-scalar tensor is seeded with ones (paddle semantics) unless `grad_tensor` is given.
        The graph is freed afterwards unless `retain_graph` is True. On a tensor with
        stop_gradient=True (made under no_grad, say) it does nothing, as paddle's does; the first
        such call logs a warning.
        """
        if self.stop_gradient:
            _graph.warn_nothing_to_differentiate()
            return
        _graph.run_backward([self], [grad_tensor], retain_graph)

    def seed_grad(self, grad_tensor: Any) -> Any:
        """The array a backward from this tensor starts with (GraphTensor protocol): ones for
        None, else `grad_tensor` (a Tensor or array of this tensor's shape) on this tensor's device."""
        return self._seed_like(self._array, grad_tensor, f"grad_tensor must have shape {self.shape}")

    def _seed_like(self, array: Any, grad_tensor: Any, needs: str) -> Any:
        """``seed_grad`` for a gradient shaped as ``array`` (this tensor's, or a sparse tensor's
        values): ones for None, else ``grad_tensor`` on array's device; ``needs`` starts the error
        for another shape."""
        if self.stop_gradient:
            raise RuntimeError("backward() on a tensor with stop_gradient=True: nothing in its graph "
                               "needs a gradient")
        xp = array_module(array)
        if grad_tensor is None:
            return xp.ones_like(array)
        g = to_module(grad_tensor._array if isinstance(grad_tensor, Tensor) else grad_tensor, xp)
        if g.shape != array.shape:
            raise ValueError(f"{needs}, got {list(g.shape)}")
        return g

    def finish_grad(self, grad: Any, owned: bool) -> None:
        """Take this backward's final gradient for this leaf (GraphTensor protocol): add it into
        `.grad` (in place where `.grad` is writeable), then fire the grad-ready hooks. A new
        `.grad` is C-contiguous whatever order the walk made it in (a weight used transposed
        twice sums F-ordered gradients), as the fused kernels of DataParallel and sharding need."""
        if grad.__class__ is _graph.RowsValue:  # an Embedding(sparse=True) weight's rows: RowsGrad
            if self.__dict__.get("_grad_hooks") or grad.dtype != self._array.dtype:
                grad, owned = grad.dense(), True  # hooks and casts take the dense gradient
            elif self._grad is None:
                self._grad = RowsGrad(grad)
                grad = None
            elif isinstance(self._grad, RowsGrad) or getattr(self._grad._array.flags, "writeable", True):
                RowsGrad.add_rows_to(self._grad, grad)
                grad = None
            else:
                grad, owned = grad.dense(), True
        if grad is not None:
            hooks = self.__dict__.get("_grad_hooks")  # register_hook's (pycoll.grad_ops)
            if hooks:
                hooked = run_grad_hooks(hooks, grad)
                if hooked is not grad:
                    grad, owned = hooked, False  # the hook's array may be referenced elsewhere
            if grad.dtype != self._array.dtype:
                grad, owned = grad.astype(self._array.dtype), True
            cur = self._grad
            if cur is None:  # a C-ordered copy unless ours: .grad is C-contiguous, as paddle's are
                self._grad = grad_tensor(grad if owned and grad.flags.c_contiguous else grad.copy())
            elif getattr(cur._array.flags, "writeable", True):
                cur._array += grad  # in place: a .grad that views a communication bucket stays a view
            else:
                self._grad = grad_tensor(cur._array + grad)
        hooks = self._ready_hooks
        if hooks:
            for hook in list(hooks.values()):
                hook(self)

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Zero `.grad` in place (paddle's default) or, with set_to_zero=False, drop it (and the rows
        a sparse gradient touched, which lazy optimizers read: pycoll._sparse_rows)."""
        forget_rows(self)
        if self._grad is None:
            return
        if set_to_zero and isinstance(self._grad, RowsGrad):
            self._grad.clear_rows()
        elif set_to_zero and getattr(self._grad._array.flags, "writeable", True):
            self._grad._array.fill(0)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory, outside the graph."""
        return wrap(self._array)

    _inplace_version = _InplaceVersion()

    @property
    def inplace_version(self) -> int:
        """How many times this tensor has been changed in place (paddle's name): every in-place
        op and assignment counts, on a tensor in the graph too."""
        return self._version

    def _bump_inplace_version(self, memory_written: bool = True) -> None:
        """Count one in-place change of this tensor (paddle's name). `memory_written`: its memory
        was written, which the graph is told, whose backwards refuse to run on memory written
        after their op used it; False where the tensor took new memory instead (an in-place op
        on a tensor in the graph)."""
        self._version += 1
        if memory_written:
            _versions.memory_written(self._array)

    def set_value(self, value: Any) -> None:
        """Copy `value` (Tensor, array or nested list) into this tensor's memory.

        Shape and dtype must match exactly (lists and scalars take the tensor's dtype); a bfloat16
        tensor also takes uint16 values as its bit patterns, as paddle's ``.numpy()`` gives them.
        """
        arr = value._array if isinstance(value, Tensor) else value
        if not is_array(arr):
            arr = np.asarray(arr, dtype=self._array.dtype)
        if arr.dtype == np.uint16 and is_bfloat16(self._array.dtype):
            arr = arr.view(self._array.dtype)
        if tuple(arr.shape) != self._array.shape:
            raise ValueError(f"set_value: value has shape {list(arr.shape)}, the tensor has shape "
                             f"{self.shape}")
        if arr.dtype != self._array.dtype:
            raise ValueError(f"set_value: value has dtype {arr.dtype}, the tensor has dtype "
                             f"{self._array.dtype}")
        xp = array_module(self._array)
        xp.copyto(self._array, to_module(arr, xp))
        self._bump_inplace_version()

    def _clear_data(self) -> None:
        """Let go of this tensor's memory (it becomes empty, of the same dtype and place):
        paddle's ``_clear_data``, which sharding level p_g_os uses between a parameter's uses."""
        self._array = array_module(self._array).empty(0, dtype=self._array.dtype)

    def _set_data(self, array: Any) -> None:
        """Hold ``array`` (of this tensor's dtype, any shape) from now on: sharding level p_g_os
        brings a released parameter back with it before its layer runs."""
        if array.dtype != self._array.dtype:
            raise ValueError(f"_set_data: array has dtype {array.dtype}, the tensor has dtype {self._array.dtype}")
        self._array = array

    def register_grad_ready_hook(self, fn: Callable[["Tensor"], None]) -> RemovableHandle:
        """Call `fn(self)` during backward, as soon as this backward's gradient for this leaf is
        final and accumulated into `.grad` (before the rest of the walk goes on).

        Only leaf tensors take this hook; it fires only in backwards whose graph reaches the leaf.
        """
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        if self.grad_node is not None:
            raise RuntimeError("register_grad_ready_hook needs a leaf tensor (a parameter or a "
                               "tensor made by the user), got the output of an op")
        if self._ready_hooks is None:
            self._ready_hooks = {}
        handle = RemovableHandle(self._ready_hooks)
        self._ready_hooks[handle.id] = fn
        return handle

    def cpu(self) -> "Tensor":
        return _to_place(self, ("cpu", 0))

    def cuda(self, device_id: Optional[int] = None, blocking: bool = True) -> "Tensor":
        """A copy on GPU ``device_id`` (default: the current one). ``blocking`` is paddle's
        argument; the copy from the host is complete when this returns either way."""
        if not isinstance(blocking, bool):
            raise TypeError(f"cuda: blocking must be a bool, got {type(blocking).__name__}")
        return _to_place(self, parse_place("gpu" if device_id is None else f"gpu:{device_id}"))


def _init_slots(t: Tensor, array: Any) -> None:
    t._array = array
    t.stop_gradient = True
    t._grad = None
    t.grad_node = None
    t.output_index = 0
    t._ready_hooks = None
    t._name = None
    t._version = 0


def wrap(array: Any) -> Tensor:
    """A Tensor over `array` itself: no checks, no copy, no move (the fast path every op uses)."""
    t = object.__new__(Tensor)
    _init_slots(t, np.asarray(array) if isinstance(array, np.generic) else array)
    return t


class RowsGrad(Tensor):
    """A ``.grad`` given as rows (an ``Embedding(sparse=True)`` weight's, paddle's SelectedRows):
    an ordinary Tensor to everything that reads it, its dense array made at the first read. Until
    then a further backward adds its rows, ``clear_grad`` drops them and the optimizers update
    those rows alone where that equals their dense update (`pending`), so a step costs time in
    proportion to the batch, not to the vocabulary."""

    _dense_slot = Tensor._array  # the slot: None while the rows are pending

    def __init__(self, value: "_graph.RowsValue"):  # not Tensor's constructor: nothing to convert
        _init_slots(self, None)
        self.stop_gradient = False
        self.__dict__["_rows"] = value

    @property
    def _array(self) -> Any:  # type: ignore[override]
        dense = RowsGrad._dense_slot.__get__(self)
        if dense is None:
            dense = self.__dict__["_rows"].dense()
            self._array = dense
        return dense

    @_array.setter
    def _array(self, value: Any) -> None:
        RowsGrad._dense_slot.__set__(self, value)
        self.__dict__["_rows"] = None

    @property
    def pending(self) -> Optional["_graph.RowsValue"]:
        """The rows, while nothing has read the dense array; else None."""
        return self.__dict__.get("_rows")

    def is_selected_rows(self) -> bool:
        """paddle's SelectedRows test: True while the gradient is rows."""
        return self.pending is not None

    def is_dense(self) -> bool:
        return self.pending is None

    def _rows_or_raise(self, fn: str) -> "_graph.RowsValue":
        rows = self.pending
        if rows is None:
            raise RuntimeError(f"{fn}(): this gradient is dense now (it was read whole, hooked, or averaged "
                               f"dense); rows()/value() answer while it is rows: is_selected_rows() says when")
        return rows

    def rows(self) -> list:
        """paddle's SelectedRows ``rows()``: the row of the table each row of ``value()`` adds to
        (repeats kept), while the gradient is rows."""
        return self._rows_or_raise("rows").ids.tolist()

    def value(self) -> Tensor:
        """paddle's SelectedRows ``value()``: the rows, ``[len(rows()), *shape[1:]]``, while the
        gradient is rows (the dense gradient adds each at its row of ``rows()``)."""
        return grad_tensor(self._rows_or_raise("value").rows)

    @property
    def shape(self) -> Size:
        rows = self.pending
        return size_of(rows.shape) if rows is not None else Tensor.shape.fget(self)

    @property
    def dtype(self) -> np.dtype:
        rows = self.pending
        return rows.dtype if rows is not None else Tensor.dtype.fget(self)

    @staticmethod
    def add_rows_to(grad: Tensor, value: "_graph.RowsValue") -> None:
        """Add ``value`` into ``grad``: to its rows while they are pending, else into its array."""
        rows = grad.pending if isinstance(grad, RowsGrad) else None
        if rows is not None:
            grad.__dict__["_rows"] = rows.plus(value)
        else:
            value.add_into(grad._array)

    @staticmethod
    def set_rows_of(param: Tensor, value: "_graph.RowsValue") -> None:
        """Make ``param``'s ``.grad`` the rows ``value``: in place while it is rows, else a new
        RowsGrad (DataParallel's averaged rows, pycoll.parallel.row_grads)."""
        grad = param._grad
        if isinstance(grad, RowsGrad) and grad.pending is not None:
            grad.__dict__["_rows"] = value
        else:
            param._grad = RowsGrad(value)

    def clear_rows(self) -> None:
        """Zero the gradient: no rows left. One made dense (read, or averaged dense) is rows again,
        so that a read to log it does not leave the next steps dense."""
        rows = self.pending
        if rows is None:
            dense = RowsGrad._dense_slot.__get__(self)
            xp = array_module(dense)
            rows = _graph.RowsValue(xp.zeros(0, dtype=np.int64), dense[:0], dense.shape, dense.dtype)
        self.__dict__["_rows"] = _graph.RowsValue(rows.ids[:0], rows.rows[:0], rows.shape, rows.dtype)
        RowsGrad._dense_slot.__set__(self, None)


def grad_tensor(array: Any) -> Tensor:
    """A ``.grad`` over `array`: a leaf with stop_gradient False, as paddle's gradients are (and
    print)."""
    t = wrap(array)
    t.stop_gradient = False
    return t


# ---- conversions ---------------------------------------------------------------------------

def to_tensor(data: Any, dtype: DTypeLike = None, place: Any = None,
              stop_gradient: bool = True) -> Tensor:
    """A Tensor from numbers, nested lists, numpy/cupy arrays, DLPack objects or Tensors, in memory
    of its own: the data is copied, as paddle's to_tensor (and torch.tensor) copy it, so that a
    collective or an in-place op on the tensor never writes into the caller's array, and one
    buffer filled for several calls gives several tensors. ``from_dlpack`` shares memory instead
    (DESIGN.md's zero-copy interop: ``__dlpack__``, ``__array__``, ``.numpy()``). Python floats
    default to the default dtype (float32)."""
    t = object.__new__(Tensor)
    _init_slots(t, array_from(data, dtype, place, copy=True))
    t.stop_gradient = bool(stop_gradient)
    if isinstance(data, Tensor):  # shown to the record hooks (auto-parallel: the copy lies as data does)
        def no_gradient(g: Any) -> tuple:
            return (None,)
        with _graph.no_grad():
            _graph.record((t,), no_gradient, (data,))
    return t


def tensor_of(data: Any) -> Tensor:
    """pycoll's own conversion of an operand (an array, numbers) or of an array it made: a Tensor
    over data's memory where it can be (a writeable array of a tensor dtype on the current
    device), else as `to_tensor` makes it. Not for Tensors."""
    return wrap(array_from(data))


def _to_place(x: Tensor, place: Any) -> Tensor:
    src = place_of(x._array)
    out = wrap(move(x._array, place))
    _graph.record((out,), lambda g: (move(g, src),), (x,))
    return out


_CPU = CPUPlace()


def __getattr__(name: str) -> Any:
    """paddle's ``paddle.tensor.<op>``: pycoll's top-level function of that name
    (``pycoll.tensor_namespace``)."""
    from pycoll.tensor_namespace import op

    return op(__name__, name)


def tensor(data: Any, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """paddle 3.3's ``paddle.tensor(data, ...)``: ``to_tensor`` with torch-style arguments. The tensor
    is made on ``device`` (default: the current one) and takes a gradient when ``requires_grad``;
    ``pin_memory`` asks for page-locked host memory, which pycoll's host tensors stand for, and
    which paddle refuses for a CPU place (RuntimeError, as paddle's)."""
    place = parse_place(device) if device is not None else None
    if pin_memory:
        if (place or current_place())[0] == "cpu":
            raise RuntimeError(f"Pinning memory is not supported for {_CPU}.")
        place = _CPU
    return to_tensor(data, dtype, place, stop_gradient=not requires_grad)


class _CallableModule(types.ModuleType):
    """This module's class: ``pycoll.tensor`` is called as paddle 3.3's ``paddle.tensor`` is
    (:func:`tensor`) and stays the module the Tensor class and paddle.tensor's paths live in."""

    def __call__(self, data: Any, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False,
                 pin_memory: bool = False) -> Tensor:
        return tensor(data, dtype, device, requires_grad, pin_memory)


sys.modules[__name__].__class__ = _CallableModule
