"""Activation recomputation (paddle's ``fleet.utils.recompute``): a block's forward keeps no
intermediate results; its backward runs the block again and differentiates that.

How it meets the graph: the block's forward runs once with the graph recorded, only to learn which
leaf tensors it reads besides its inputs (its parameters, or tensors a function closes over);
that graph is dropped at once, so the block's activations are freed. Its outputs become the
outputs of one node whose inputs are the block's tensor arguments *and* those leaves. In backward
the node runs the block again (from the random state it had the first time, when
``preserve_rng_state``), and ``pycoll.grad`` gives the gradients of every input. So parameters
get their gradients from the ordinary backward walk, at the point where the block's backward
runs: DataParallel's hooks, ``find_unused_parameters`` and gradient hooks see them as for any
other op.
"""
from __future__ import annotations

import contextlib
import random
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._complex_grads import conjugate_grads
from pycoll._graph import enable_grad, graph_leaves, is_grad_enabled, no_grad, record
from pycoll._logging import logger
from pycoll.grad_ops import grad
from pycoll.nn import Layer
from pycoll.parallel import get_rng_state_tracker
from pycoll.random import get_rng_state, set_rng_state
from pycoll.tensor import Tensor, wrap


def recompute(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations; they are computed again in
    backward. ``function`` is a Layer or any callable; it returns a Tensor or a tuple/list (whose
    Tensors get gradients).

    Keyword arguments besides ``function``'s own: ``preserve_rng_state`` (default True: the second
    run draws the same random numbers as the first, dropout included, also those drawn inside the
    model-parallel RNG tracker's states) and ``use_reentrant`` (default True). As in paddle, with
    ``use_reentrant=True`` a block none of whose tensor inputs needs a gradient runs without the
    graph: its outputs and its parameters get no gradient (a warning says so). With False its
    parameters still get theirs. ``offload_indices`` (paddle's: keep those inputs in host memory
    meanwhile) is accepted; pycoll keeps every saved input where it is.
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    use_reentrant = kwargs.pop("use_reentrant", True)
    kwargs.pop("offload_indices", None)
    if not callable(function):
        raise TypeError(f"recompute: function must be a Layer or a callable, got {type(function).__name__}")
    if not is_grad_enabled():
        return function(*args, **kwargs)
    inputs = [v for v in (*args, *kwargs.values()) if isinstance(v, Tensor)]
    if _none_needs_grad(inputs):
        check_recompute_necessary(inputs)  # says so
        if use_reentrant:
            with no_grad():
                return function(*args, **kwargs)
    states = _random_states() if preserve else None

    outputs, fresh_inputs = _run(function, args, kwargs)
    out_tensors, rebuild = _tensors_of(outputs)
    fresh_ids = {id(t) for t in fresh_inputs}
    leaves = [t for t in graph_leaves(out_tensors) if id(t) not in fresh_ids]
    results = [wrap(t.array) for t in out_tensors]  # the recorded graph dies with ``outputs``
    # paddle's: use_reentrant=False keeps an output that takes no gradient (a mask) as it is,
    # the reentrant form (a PyLayer) marks every output as taking one
    constant = [t.stop_gradient for t in out_tensors] if not use_reentrant else [False] * len(results)
    del outputs, out_tensors, fresh_inputs

    def backward(grads: Any) -> List[Any]:
        grads = [grads] if len(results) == 1 else list(grads)
        with _random_states_set(states):
            again, again_inputs = _run(function, args, kwargs)
        again_tensors, _ = _tensors_of(again)
        seeded = [(t, g) for t, g in zip(again_tensors, grads) if g is not None and not t.stop_gradient]
        wanted = [t for t in again_inputs if not t.stop_gradient] + leaves
        if not seeded or not wanted:
            return [None] * (len(inputs) + len(leaves))
        found = iter(grad([t for t, _ in seeded], wanted, [wrap(g) for _, g in seeded], allow_unused=True))
        got = [None if t.stop_gradient else next(found) for t in again_inputs] + [next(found) for _ in leaves]
        return [None if g is None else g.array for g in got]

    # backward runs the block again on the inputs' values then: they must still be those of now
    # its backward runs the graph's own walk, which already applies the complex convention
    record(results, conjugate_grads(backward), inputs + leaves, fresh=False, saved=inputs)
    for result, is_constant in zip(results, constant):
        if is_constant:
            result.stop_gradient = True
    return rebuild(results)


def _run(function: Callable[..., Any], args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[Any, List[Tensor]]:
    """``function`` on fresh leaves standing for its tensor arguments, with the graph recorded
    (so that it ends there): (its outputs, those leaves in argument order)."""
    fresh: List[Tensor] = []

    def stand_in(v: Any) -> Any:
        if not isinstance(v, Tensor):
            return v
        leaf = v.detach()
        leaf.stop_gradient = v.stop_gradient
        fresh.append(leaf)
        return leaf

    new_args = [stand_in(v) for v in args]
    new_kwargs = {k: stand_in(v) for k, v in kwargs.items()}
    with enable_grad():
        return function(*new_args, **new_kwargs), fresh


def _tensors_of(outputs: Any) -> Tuple[List[Tensor], Callable[[List[Tensor]], Any]]:
    """The Tensors a block returned, and how to put replacements back in the same shape."""
    if isinstance(outputs, Tensor):
        return [outputs], lambda new: new[0]
    if isinstance(outputs, (tuple, list)):
        positions = [i for i, v in enumerate(outputs) if isinstance(v, Tensor)]

        def rebuild(new: List[Tensor]) -> Any:
            items = list(outputs)
            for i, t in zip(positions, new):
                items[i] = t
            return type(outputs)(items)
        return [outputs[i] for i in positions], rebuild
    raise TypeError(f"recompute: the function must return a Tensor or a tuple/list, got {type(outputs).__name__}")


def _none_needs_grad(inputs: Sequence[Any]) -> bool:
    """Whether no tensor among ``inputs`` (or in a tuple among them) takes a gradient."""
    tensors = [t for v in inputs for t in (v if type(v) is tuple else (v,)) if isinstance(t, Tensor)]
    return all(t.stop_gradient for t in tensors)


def check_recompute_necessary(inputs: Sequence[Any]) -> None:
    """paddle's: warn when no tensor among ``inputs`` (or in a tuple among them) takes a
    gradient, as recomputing that block in backward is then of no use."""
    if _none_needs_grad(inputs):
        logger.warning("[Recompute]: None of the inputs to current recompute block need grad, therefore "
                       "there is NO need to recompute this block in backward !")


@contextlib.contextmanager
def switch_rng_state_tracker(rng_state: Any, tracker: Dict[str, Any], numpy_state: Any, random_state: Any,
                             custom_state: Any = None, custom_get_state_func: Optional[Callable[[], Any]] = None,
                             custom_set_state_func: Optional[Callable[[Any], None]] = None) -> Iterator[None]:
    """paddle's: inside, pycoll's generator state ``rng_state``, the model-parallel tracker's
    states ``tracker``, NumPy's global ``numpy_state``, Python's ``random_state`` and, with both
    functions given, ``custom_state``; after, the states before."""
    if custom_state is not None and (custom_get_state_func is None or custom_set_state_func is None):
        raise ValueError("switch_rng_state_tracker: custom_state needs custom_get_state_func and "
                         "custom_set_state_func")
    before = np.random.get_state(), random.getstate()
    custom_before = custom_get_state_func() if custom_state is not None else None
    with _random_states_set((rng_state, tracker)):
        np.random.set_state(numpy_state)
        random.setstate(random_state)
        if custom_state is not None:
            custom_set_state_func(custom_state)
        try:
            yield
        finally:
            np.random.set_state(before[0])
            random.setstate(before[1])
            if custom_state is not None:
                custom_set_state_func(custom_before)


def _random_states() -> Tuple[Any, Dict[str, Any]]:
    return get_rng_state(), get_rng_state_tracker().get_states_tracker()


@contextlib.contextmanager
def _random_states_set(states: Optional[Tuple[Any, Dict[str, Any]]]) -> Iterator[None]:
    """Inside: the random states ``states`` (None: leave them alone); after: the ones before."""
    if states is None:
        yield
        return
    now = _random_states()
    set_rng_state(states[0])
    get_rng_state_tracker().set_states_tracker(states[1])
    try:
        yield
    finally:
        set_rng_state(now[0])
        get_rng_state_tracker().set_states_tracker(now[1])


def recompute_sequential(ctx: Dict[str, Any], functions: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the layers of ``functions`` (a Sequential or a list) in ``ctx['segments']`` segments
    (default 1), recomputing every segment but the last (paddle's split: the first segments get
    ``len // segments`` layers each, the last gets the rest); ``ctx['preserve_rng_state']``
    (default True) as for ``recompute``."""
    segments = ctx.get("segments", 1)
    preserve = ctx.get("preserve_rng_state", True)
    layers = list(functions.children()) if isinstance(functions, Layer) else list(functions)
    if isinstance(segments, bool) or not isinstance(segments, int) or not 1 <= segments <= max(len(layers), 1):
        raise ValueError(f"recompute_sequential: ctx['segments'] must be an int in [1, {len(layers)}] (the number "
                         f"of layers), got {segments!r}")

    def run(begin: int, end: int) -> Callable[..., Any]:
        def chain(*values: Any) -> Any:
            for layer in layers[begin:end]:
                values = (layer(*values),)
            return values[0]
        return chain

    size = len(layers) // segments
    end = 0
    for begin in range(0, size * (segments - 1), size):
        end = begin + size
        args = (recompute(run(begin, end), *args, preserve_rng_state=preserve, **kwargs),)
    return run(end, len(layers))(*args)
