"""Random tensors beyond randn/rand/randint: the ``_like`` forms, randperm, normal, uniform,
standard_normal, bernoulli and multinomial. Like `pycoll.creation`'s, every draw comes
from pycoll's one generator on the host (`pycoll.random`) and is then moved to the tensor's place,
so CPU and GPU runs seeded alike draw the same values. Sampled tensors take no gradient."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll import creation
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, paired
from pycoll.creation_options import creation_options
from pycoll.device import array_module, move, place_of
from pycoll.dtypes import DTypeLike, convert_dtype, default_float, float64, int64, is_floating
from pycoll.kernels import host_math
from pycoll.random import get_rng, normal_draw
from pycoll.tensor import Tensor, wrap


def _at(host: np.ndarray, like: Tensor) -> Tensor:
    """`host` on `like`'s place."""
    return wrap(move(host, place_of(like._array)))


def _laid_as(host: np.ndarray, like: Tensor) -> Tensor:
    """`host`, a draw of `like`'s whole shape, on its place and laid as it is (auto-parallel: this
    rank's piece of the whole draw, so that the values equal the plain call's seeded alike)."""
    return paired(like, _at(host, like))[1]


def randint_like(x: Any, low: int = 0, high: Optional[int] = None, dtype: DTypeLike = None,
                 name: Optional[str] = None) -> Tensor:
    """Integers from [low, high) (from [0, low) without high) of x's shape, in x's dtype unless
    `dtype` says otherwise (paddle's: a float x gives float values)."""
    x = as_tensor(x)
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint_like: high ({high}) must be greater than low ({low})")
    dt = convert_dtype(dtype) or x.dtype
    creation.check_int_range("randint_like", low, high, dt)
    return _at(get_rng().integers(low, high, tuple(x.shape)).astype(dt), x)


def rand_like(input: Any, name: Optional[str] = None, *, dtype: DTypeLike = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    """Uniform [0, 1) values of input's shape and (unless `dtype` says) dtype."""
    x = as_tensor(input)
    dt = creation.float_dtype(dtype or x.dtype, "rand_like")
    out = _at(get_rng().random(tuple(x.shape)).astype(dt), x)
    out.stop_gradient = not requires_grad
    return out


@param_aliases({"input": "x"})
def randn_like(x: Any, dtype: DTypeLike = None, name: Optional[str] = None, *, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """Standard-normal values of x's shape and (unless `dtype` says) dtype."""
    x = as_tensor(x)
    dt = creation.float_dtype(dtype or x.dtype, "randn_like")
    out = _at(get_rng().standard_normal(tuple(x.shape)).astype(dt), x)
    out.stop_gradient = not requires_grad
    return out


@creation_options()
def randperm(n: int, dtype: DTypeLike = "int64", name: Optional[str] = None) -> Tensor:
    """A random permutation of 0..n-1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"randperm: n must be an int >= 0, got {n!r}")
    dt = convert_dtype(dtype)
    if dt.kind not in "iuf":
        raise TypeError(f"randperm: dtype must be an integer or floating-point dtype, got {dt}")
    return wrap(move(get_rng().permutation(int(n)).astype(dt)))


@creation_options()
def standard_normal(shape: Any, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """``randn``."""
    return creation.randn(shape, dtype)


@creation_options()
def uniform(shape: Any, dtype: DTypeLike = None, min: float = 0.0, max: float = 1.0, seed: int = 0,  # noqa: A002
            name: Optional[str] = None) -> Tensor:
    """Values drawn uniformly from [min, max) (a non-zero `seed`: from a generator of its own)."""
    if not min <= max:
        raise ValueError(f"uniform: min must be <= max, got min={min} and max={max}")
    dt = convert_dtype(dtype) or default_float()
    generator = get_rng() if seed == 0 else np.random.default_rng(seed)
    return wrap(move(generator.uniform(min, max, creation.shape_arg(shape)).astype(dt)))


@param_aliases({"size": "shape"})
def normal(mean: Any = 0.0, std: Any = 1.0, shape: Any = None, name: Optional[str] = None) -> Tensor:
    """Values drawn from N(mean, std ** 2): numbers with `shape`, or tensors (broadcast) giving
    one draw per element (lists and arrays count as tensors: one draw per element too). A complex
    `mean` (a number: complex64; a tensor: its dtype) draws from the complex normal distribution,
    real and imaginary parts each N(0, std ** 2 / 2) around the mean's (paddle's)."""
    mean, std = (as_tensor(v) if isinstance(v, (list, tuple, np.ndarray)) else v for v in (mean, std))
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    for arg, v in (("mean", mean), ("std", std)):
        if isinstance(v, Tensor) and not (is_floating(v.dtype) or (arg == "mean" and v.dtype.kind == "c")):
            kinds = "floating-point or complex" if arg == "mean" else "floating-point"
            raise TypeError(f"normal: {arg} must be a {kinds} tensor, got {v.dtype}")
    if isinstance(std, complex):
        raise TypeError(f"normal: std must be a real number, got {std!r}")
    if isinstance(mean, complex):
        dt = np.dtype(np.complex64)
    else:
        dt = tensors[0].dtype if tensors else default_float()
    m = mean.numpy() if isinstance(mean, Tensor) else mean
    s = std.numpy() if isinstance(std, Tensor) else std
    draw_shape = np.broadcast_shapes(np.shape(m), np.shape(s)) if tensors else creation.shape_arg(
        [1] if shape is None else shape)
    with quiet():  # an infinite std or mean: inf/NaN draws, silently as paddle's
        draw = (normal_draw(draw_shape, 0.0, 1.0, dt.kind == "c")(get_rng()) * s + m).astype(dt)
    return _laid_as(draw, tensors[0]) if tensors else wrap(move(draw))


def bernoulli(x: Any, p: Optional[float] = None, name: Optional[str] = None) -> Tensor:
    """1 with probability x (elementwise; or `p` for every element), else 0, in x's dtype."""
    x = as_tensor(x)
    prob = x.numpy() if p is None else p
    if not np.all((np.asarray(prob) >= 0) & (np.asarray(prob) <= 1)):  # NaN too
        raise ValueError(f"bernoulli: probabilities ({'x' if p is None else 'p'}) must lie in [0, 1]")
    return _laid_as((get_rng().random(tuple(x.shape)) < prob).astype(x.dtype), x)


@param_aliases({"input": "x"})
def multinomial(x: Any, num_samples: int = 1, replacement: bool = False, name: Optional[str] = None) -> Tensor:
    """`num_samples` int64 category indices drawn with the (unnormalised) weights of x's last
    dimension, per row; without `replacement`, each category at most once."""
    x = as_tensor(x)
    if isinstance(num_samples, Tensor) and num_samples.size == 1 and num_samples.dtype.kind in "iu":
        num_samples = num_samples.item()  # paddle takes a Tensor of one int too
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be an int > 0, got {num_samples!r}")
    w = x.numpy().astype(float64)
    if not (w >= 0).all() and np.isnan(w).any():  # one pass where the weights are fine
        raise ValueError("multinomial: x holds NaN; its weights must be >= 0")
    if x.ndim not in (1, 2) or not (w >= 0).all() or np.any(w.sum(-1) <= 0):
        raise ValueError(f"multinomial: x must be 1-D or 2-D non-negative weights with a positive sum per row, "
                         f"got shape {x.shape}")
    rows = w.reshape(-1, w.shape[-1])
    infinite = np.isinf(rows)
    if infinite.any():  # a row with infinite weights draws among those alone, as paddle's does
        rows = np.where(infinite.any(axis=1, keepdims=True), infinite, rows).astype(float64)
    if not replacement and num_samples > int((rows > 0).sum(-1).min()):
        raise ValueError(f"multinomial: without replacement, num_samples ({num_samples}) cannot exceed the number "
                         f"of categories with non-zero weight")
    picks = draw_categories(rows, num_samples, replacement)
    return _at(picks.reshape(w.shape[:-1] + (num_samples,)), x)


def draw_categories(weights: Any, num_samples: int, replacement: bool = True) -> Any:
    """[R, num_samples] int64 category indices drawn per row of ``weights`` [R, C] (non-negative,
    a positive sum per row; without replacement each category at most once, num_samples at most
    a row's count of non-zero weights), in weights' array module. All rows at once, from pycoll's
    host generator: with replacement each draw is a uniform number looked up in its row's
    cumulative weights, without it the rows' categories are ordered by log(U) / weight, U uniform
    in (0, 1] per category (an exponential race, the Gumbel-top-k trick: the first num_samples
    are a draw without replacement, in the order a draw one at a time gives). Those few are
    found one pass each or by a partition: sorting every category cost 30x paddle's time for a
    few draws from 50000."""
    xp = array_module(weights)
    rows, cats = weights.shape
    w = weights.astype(float64, copy=False)  # read only (multinomial's are float64 already)
    if replacement:
        uniform = move(get_rng().random((rows, num_samples)), place_of(weights))
        cdf = host_math.cumsum(w, 1)
        cdf = xp.cumsum(w, axis=1) if cdf is None else cdf
        cdf /= cdf[:, -1:]
        offsets = xp.arange(rows, dtype=float64)[:, None]  # row r's cdf in [r, r + 1]: one sorted array
        cdf += offsets
        uniform += offsets
        picks = xp.searchsorted(cdf.reshape(-1), uniform.reshape(-1), side="right").reshape(rows, num_samples)
        picks -= (xp.arange(rows) * cats)[:, None]
        past = picks >= cats  # a draw rounded past its row's end: the row's last category of some weight
        if past.any():
            last = cats - 1 - xp.argmax(w[:, ::-1] > 0, axis=1)
            picks = xp.where(past, last[:, None], picks)
        return picks.astype(int64, copy=False)
    if num_samples == 1:  # one draw without replacement is one with it (a search, not C keys)
        return draw_categories(weights, 1, True)
    uniform = 1.0 - move(get_rng().random((rows, cats)), place_of(weights))  # in (0, 1]: log is finite
    with quiet():  # a category of no weight: -inf, after every weighted one
        keys = xp.where(w > 0, xp.log(uniform) / w, -xp.inf)  # descending: the race's order
    if num_samples > _FEW_DRAWS:  # the first num_samples found by a partition, then ordered
        first = xp.argpartition(-keys, num_samples - 1, axis=1)[:, :num_samples]
        order = xp.argsort(-xp.take_along_axis(keys, first, 1), axis=1, kind="stable")
        return xp.take_along_axis(first, order, 1).astype(int64)
    picks = xp.empty((rows, num_samples), int64)
    every_row = xp.arange(rows)
    for i in range(num_samples):  # a few: one pass each, cheaper than a partition
        picks[:, i] = xp.argmax(keys, axis=1)
        keys[every_row, picks[:, i]] = -xp.inf  # a weighted category with a finite key remains
    return picks


_FEW_DRAWS = 32  # up to this many draws per row, draw_categories takes the largest keys one at a time


def _per_row(value: Any, rows: int, fn: str, arg: str) -> np.ndarray:
    """``value`` (a Tensor, array or number) as one float64 per row."""
    a = np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=float64).reshape(-1)
    if a.size == 1:
        a = np.repeat(a, rows)
    if a.size != rows:
        raise ValueError(f"{fn}: {arg} must hold one value per row of x ({rows}), got {a.size}")
    return a


def top_p_sampling(x: Tensor, ps: Any, threshold: Any = None, topp_seed: Any = None, seed: int = -1, k: int = 0,
                   mode: str = "truncated", return_top: bool = False, name: Optional[str] = None) -> tuple:
    """paddle's nucleus sampling (a GPU kernel in paddle; any device here) of the rows of
    probabilities x [B, V]: row b draws a token with chance proportional to its probability among
    the most probable tokens whose running sum first reaches ``ps[b]`` (ps <= 0: the most probable
    one), a uniform u times ps[b] looked up in the sorted running sum as paddle's kernel does;
    where the drawn token's probability is under ``threshold[b]``, a token drawn uniformly among
    those at or over it instead (paddle's rule). Returns (the drawn probabilities [B, 1], their
    ids [B, 1] int64), and with ``return_top`` the ``k`` largest probabilities and their ids
    [B, k] after them. Draws: ``topp_seed`` [B] gives each row its own stream, ``seed`` >= 0 all
    rows one stream (each row the same draw, as paddle's), -1 pycoll's generator. Both of
    paddle's ``mode``s draw this way here."""
    fn = "top_p_sampling"
    x = as_tensor(x)
    if x.ndim != 2 or not is_floating(x.dtype):
        raise ValueError(f"{fn}: x must be probabilities [batch, vocab] of a floating dtype, got shape {x.shape} "
                         f"dtype {x.dtype}")
    if mode not in ("truncated", "non-truncated"):
        raise ValueError(f"{fn}: mode must be 'truncated' or 'non-truncated', got {mode!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0 or k > x.shape[1]:
        raise ValueError(f"{fn}: k must be an int in [0, {x.shape[1]}], got {k!r}")
    rows = x.shape[0]
    top_p = _per_row(ps, rows, fn, "ps")
    probs = x.numpy().astype(float64)
    order = np.argsort(-probs, axis=1, kind="stable")
    ranked = np.take_along_axis(probs, order, 1)
    if topp_seed is not None:
        seeds = _per_row(topp_seed, rows, fn, "topp_seed").astype(np.int64)
        streams = [np.random.default_rng(int(s)) for s in seeds]
        uniform = np.array([stream.random() for stream in streams])
    elif seed >= 0:
        streams = [np.random.default_rng(seed)] * rows
        uniform = np.repeat(streams[0].random(), rows)
    else:
        streams = [get_rng()] * rows
        uniform = get_rng().random(rows)
    reached = np.cumsum(ranked, axis=1) >= (uniform * top_p)[:, None]
    pick = np.where(reached.any(axis=1), reached.argmax(axis=1), ranked.shape[1] - 1)
    if threshold is not None:
        floor = _per_row(threshold, rows, fn, "threshold")
        for row in np.flatnonzero(ranked[np.arange(rows), pick] < floor):
            pick[row] = streams[row].integers(max(int((ranked[row] >= floor[row]).sum()), 1))
    every = np.arange(rows)
    out = (_at(ranked[every, pick][:, None].astype(x.dtype), x), _at(order[every, pick][:, None].astype(int64), x))
    if return_top:
        out += (_at(ranked[:, :k].astype(x.dtype), x), _at(order[:, :k].astype(int64), x))
    return out


Tensor.multinomial = multinomial  # type: ignore[attr-defined]
Tensor.top_p_sampling = top_p_sampling  # type: ignore[attr-defined]  # (paddle.tensor's, not top-level)
