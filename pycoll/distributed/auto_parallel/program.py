"""What one step of a DistModel mode ran, as a readable program (``Program``), recorded by a
``Tracer``.

pycoll runs eagerly, so its "programs" are records, not graphs that run: while a step runs under a
Tracer, every op that reaches the autograd graph's ``record`` (every differentiable op, whether
or not a gradient is wanted) is listed with its inputs' and outputs' shapes and dtypes; the
backward functions it records are wrapped so that backward lists each op's gradient op as it
runs; collectives are named where they happen (the model-parallel ops, ``reshard``, the
data-parallel gradient buckets, the loss's average). The *dist* program shows this rank's local
shapes and every collective; the *serial* program is the same step for the whole model in one
process: collectives dropped (their outputs are their inputs' whole values) and shapes whole.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from pycoll import _graph

# pycoll.parallel.mp_ops' autograd collectives by class: (paddle's op name, forward comm, backward comm)
_MP_OPS = {"_Identity": ("c_identity", "", "all_reduce"), "_AllReduce": ("mp_allreduce", "all_reduce", ""),
           "_Split": ("c_split", "", "all_gather(last dim)"), "_Concat": ("c_concat", "all_gather(last dim)", "")}
COLLECTIVE_OPS = {"c_identity", "mp_allreduce", "c_split", "c_concat", "reshard"}

_active: List["Tracer"] = []


@dataclass
class Var:
    name: str
    shape: List[int]          # this rank's
    global_shape: List[int]   # the whole tensor's
    dtype: str

    def text(self, serial: bool) -> str:
        return f"{self.name}{self.global_shape if serial else self.shape} {self.dtype}"


@dataclass
class Op:
    kind: str                 # "forward", "backward", "comm", "optimizer", "startup"
    name: str
    inputs: List[Var] = field(default_factory=list)
    outputs: List[Var] = field(default_factory=list)
    comm: str = ""            # the collective(s) this op runs on this rank, "" for none
    note: str = ""
    grad_comm: Any = ""       # the collective(s) of its backward (or a function giving them)
    slots: List[Optional[Var]] = field(default_factory=list)  # inputs, None for non-tensors
    out_ids: List[int] = field(default_factory=list)  # id() of the output tensors


class Program:
    """A readable list of ops: ``ops``, ``collectives()``, ``str(program)``."""

    def __init__(self, title: str, ops: Sequence[Op], serial: bool):
        self.title = title
        self.serial = serial
        self.ops = list(ops)

    def collectives(self) -> List[Op]:
        return [op for op in self.ops if op.comm]

    def __len__(self) -> int:
        return len(self.ops)

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __str__(self) -> str:
        lines = [f"{{ // {self.title}"]
        kind = None
        for op in self.ops:
            if op.kind != kind:
                kind = op.kind
                lines.append(f"  // {kind}")
            outs = ", ".join(v.text(self.serial) for v in op.outputs)
            call = f"{op.name}({', '.join(v.text(self.serial) for v in op.inputs)})"
            text = f"{outs} = {call}" if outs else call
            extra = "; ".join(x for x in (op.comm, op.note) if x)
            lines.append(f"    {text}" + (f"    # {extra}" if extra else ""))
        lines.append("}")
        return "\n".join(lines)

    __repr__ = __str__


def serial_ops(ops: Sequence[Op]) -> List[Op]:
    """The ops of a dist record as the whole model runs them: no collectives, whole shapes, and a
    collective's input and output one variable (the same whole value), under the name a user gave
    it (an input, an output, the loss) if any."""
    same: Dict[str, str] = {}

    def root(name: str) -> str:
        while name in same:
            name = same[name]
        return name

    for op in ops:  # join the names each collective connects, preferring a given name to a tmp_
        if op.kind == "forward" and op.name in COLLECTIVE_OPS and op.inputs and op.outputs:
            a, b = root(op.inputs[0].name), root(op.outputs[0].name)
            if a != b:
                keep, drop = (b, a) if a.startswith("tmp_") and not b.startswith("tmp_") else (a, b)
                same[drop] = keep

    def rename(v: Var) -> Var:
        base, grad = (v.name[:-5], "@GRAD") if v.name.endswith("@GRAD") else (v.name, "")
        return Var(root(base) + grad, v.shape, v.global_shape, v.dtype)

    return [Op(op.kind, op.name, [rename(v) for v in op.inputs], [rename(v) for v in op.outputs], "", op.note)
            for op in ops if op.kind != "comm" and op.name.removesuffix("_grad") not in COLLECTIVE_OPS]


def closure_value(fn: Callable, name: str) -> Any:
    code = getattr(fn, "__code__", None)
    if code is None or name not in code.co_freevars:
        return None
    return fn.__closure__[code.co_freevars.index(name)].cell_contents


def describe_fn(fn: Callable) -> Dict[str, Any]:
    """An op's name and collectives from the backward function it records."""
    info = dict(getattr(fn, "__pycoll_op__", None) or {})
    qual = getattr(fn, "__qualname__", "op")
    if "name" not in info:
        if qual.startswith("PyLayer.apply"):
            cls = closure_value(fn, "cls")
            cls_name = getattr(cls, "__name__", "py_layer")
            name, comm, grad_comm = _MP_OPS.get(cls_name, (cls_name, "", ""))
            info.update(name=name, comm=comm, grad_comm=grad_comm)
        else:
            info["name"] = qual.split(".<locals>")[0].rsplit(".", 1)[-1]
    return info


class Tracer:
    """Records the ops of one step (see the module's text). ``names`` maps ``id(tensor)`` to the
    names parameters and inputs take in the listing; the tensors seen are kept alive until the
    tracer is dropped, so that ids stay unique."""

    def __init__(self, names: Optional[Dict[int, str]] = None):
        self.ops: List[Op] = []
        self._names = dict(names or {})
        self._vars: Dict[int, Var] = {}
        self._alive: List[Any] = []
        self._scope = ""  # the mesh dimension the collectives now recorded run over
        self._saved: Optional[tuple] = None
        self._temporaries = 0
        self.consumers: Dict[int, List[Op]] = {}

    # ---- variables -----------------------------------------------------------------------
    def var(self, tensor: Any, like: Optional[List[int]] = None) -> Var:
        """The listing's variable for ``tensor``; ``like``: its whole shape when not known."""
        known = self._vars.get(id(tensor))
        if known is not None:
            return known
        shape = list(tensor._array.shape)
        whole = list(tensor.shape) if hasattr(tensor, "_global_shape") else (like or shape)
        name = self._names.get(id(tensor))
        if name is None:
            name, self._temporaries = f"tmp_{self._temporaries}", self._temporaries + 1
        v = self._vars[id(tensor)] = Var(name, shape, whole, str(tensor._array.dtype))
        self._alive.append(tensor)
        return v

    def add(self, kind: str, name: str, inputs: Sequence[Var] = (), outputs: Sequence[Var] = (),
            comm: str = "", note: str = "") -> Op:
        op = Op(kind, name, list(inputs), list(outputs), comm, note)
        self.ops.append(op)
        return op

    @contextlib.contextmanager
    def scope(self, where: str) -> Iterator[None]:
        """Collectives recorded inside run over ``where`` (e.g. ``'mp' [0, 1]``)."""
        previous, self._scope = self._scope, where
        try:
            yield
        finally:
            self._scope = previous

    def _over(self, comm: str) -> str:
        return f"{comm} over {self._scope}" if comm and self._scope and " over " not in comm else comm

    # ---- recording ------------------------------------------------------------------------
    def _seen(self, outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Optional[Callable]:
        """The graph's record hook: list the op, and hand back its backward wrapped to list its
        gradient op when that runs."""
        return self._traced_backward(backward, self._forward(outputs, backward, inputs))

    def _forward(self, outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Op:
        info = describe_fn(backward)
        slots = [None if t is None else self.var(t) for t in inputs]
        ins = [v for v in slots if v is not None]
        outs = []
        for t in outputs:
            outs.append(self.var(t, like=_whole_shape(info["name"], list(t._array.shape), ins)))
        op = self.add("forward", info["name"], ins, outs, self._over(info.get("comm", "")),
                      info.get("note", ""))
        op.grad_comm, op.slots, op.out_ids = info.get("grad_comm", ""), slots, [id(t) for t in outputs]
        for t in inputs:
            if t is not None:
                self.consumers.setdefault(id(t), []).append(op)
        return op

    def _traced_backward(self, backward: Optional[Callable], op: Op) -> Optional[Callable]:
        if backward is None:
            return None
        scope = self._scope

        def traced(grad: Any) -> Any:
            grads = backward(grad)
            if self in _active:
                given = grad if isinstance(grad, (list, tuple)) else [grad]
                comm = op.grad_comm() if callable(op.grad_comm) else op.grad_comm
                comm = f"{comm} over {scope}" if comm and scope and " over " not in comm else comm
                self.add("backward", f"{op.name}_grad",
                         [grad_var(v) for v, g in zip(op.outputs, given) if g is not None],
                         [grad_var(v) for v, g in zip(op.slots, grads or ()) if v is not None and g is not None],
                         comm)
            return grads
        return traced

    def __enter__(self) -> "Tracer":
        if _active:
            raise RuntimeError("a Tracer is already recording")
        self._hook = _graph.add_record_hook(self._seen)
        _active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._hook.remove()
        _active.remove(self)


def current() -> Optional[Tracer]:
    """The Tracer recording now, if any."""
    return _active[0] if _active else None


@contextlib.contextmanager
def comm_scope(where: str) -> Iterator[None]:
    """Name the mesh dimension of the collectives recorded inside, when a Tracer records."""
    tracer = current()
    if tracer is None:
        yield
    else:
        with tracer.scope(where):
            yield


def grad_var(v: Var) -> Var:
    return Var(f"{v.name}@GRAD", v.shape, v.global_shape, v.dtype)


def _whole_shape(name: str, local: List[int], ins: List[Var]) -> List[int]:
    """The whole shape of an op's output of local shape ``local``: a matmul's from its operands'
    whole shapes, a collective's is its input's, any other op's is that of an input of the same
    local shape (elementwise ops, losses over a batch); else the local shape."""
    if name in ("linear", "matmul") and len(ins) >= 2 and len(local) >= 1:
        x, w = ins[0], ins[1]
        if x.shape[:-1] == local[:-1] and w.shape[-1:] == local[-1:]:
            return x.global_shape[:-1] + w.global_shape[-1:]
    if name in COLLECTIVE_OPS and ins:
        return list(ins[0].global_shape)
    for v in ins:
        if v.shape == local:
            return list(v.global_shape)
    return list(local)
