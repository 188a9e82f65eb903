"""paddle.audio's window functions: ``get_window(window, win_length, fftbins=True,
dtype='float64')`` over the scipy-style windows (hamming, hann, kaiser, bartlett, nuttall,
gaussian, general_gaussian, exponential, triang, bohman, blackman, cosine, tukey, taylor), and
paddle 3.3's torch-style ``hann_window``/``hamming_window``/``kaiser_window``/``blackman_window``/
``bartlett_window`` (float32 by default, with the creation options ``device``, ``requires_grad``
and ``pin_memory``).

A window depends on its parameters only, never on data, so it is computed on the host in float64
(``M`` samples of a symmetric window; a periodic one, ``fftbins=True``, is the first ``M`` of
``M + 1``), then cast to ``dtype`` and moved to the current device, as pycoll's random draws are.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np

from pycoll.creation_options import creation_options
from pycoll.device import move
from pycoll.dtypes import DTypeLike, convert_dtype, is_floating
from pycoll.tensor import Tensor, wrap

WindowSpec = Union[str, Tuple[Any, ...]]


def _general_cosine(n: int, coefficients: Tuple[float, ...]) -> np.ndarray:
    """sum_k a_k cos(k x) over n points x evenly spread over [-pi, pi]."""
    x = np.linspace(-math.pi, math.pi, n)
    return sum(a * np.cos(k * x) for k, a in enumerate(coefficients))


def _hamming(n: int) -> np.ndarray:
    return _general_cosine(n, (0.54, 0.46))


def _hann(n: int) -> np.ndarray:
    return _general_cosine(n, (0.5, 0.5))


def _blackman(n: int) -> np.ndarray:
    return _general_cosine(n, (0.42, 0.50, 0.08))


def _nuttall(n: int) -> np.ndarray:
    return _general_cosine(n, (0.3635819, 0.4891775, 0.1365995, 0.0106411))


def _bartlett(n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.float64)
    return np.where(i <= (n - 1) / 2.0, 2.0 * i / (n - 1), 2.0 - 2.0 * i / (n - 1))


def _triang(n: int) -> np.ndarray:
    i = np.arange(1, (n + 1) // 2 + 1, dtype=np.float64)
    if n % 2 == 0:
        half = (2 * i - 1.0) / n
        return np.concatenate([half, half[::-1]])
    half = 2 * i / (n + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bohman(n: int) -> np.ndarray:
    x = np.abs(np.linspace(-1, 1, n)[1:-1])
    inner = (1 - x) * np.cos(math.pi * x) + np.sin(math.pi * x) / math.pi
    return np.concatenate([[0.0], inner, [0.0]])


def _cosine(n: int) -> np.ndarray:
    return np.sin(math.pi / n * (np.arange(n) + 0.5))


def _kaiser(n: int, beta: float) -> np.ndarray:
    alpha = (n - 1) / 2.0
    return np.i0(beta * np.sqrt(1 - ((np.arange(n) - alpha) / alpha) ** 2.0)) / np.i0(beta)


def _gaussian(n: int, std: float) -> np.ndarray:
    i = np.arange(n) - (n - 1.0) / 2.0
    return np.exp(-(i ** 2) / (2 * std * std))


def _general_gaussian(n: int, p: float, sig: float) -> np.ndarray:
    i = np.arange(n) - (n - 1.0) / 2.0
    return np.exp(-0.5 * np.abs(i / sig) ** (2 * p))


def _exponential(n: int, center: Optional[float] = None, tau: float = 1.0) -> np.ndarray:
    center = (n - 1) / 2 if center is None else center
    return np.exp(-np.abs(np.arange(n) - center) / tau)


def _tukey(n: int, alpha: float = 0.5) -> np.ndarray:
    if alpha <= 0:
        return np.ones(n)
    if alpha >= 1.0:
        return _hann(n)
    i = np.arange(n, dtype=np.float64)
    width = int(alpha * (n - 1) / 2.0)
    rising = 0.5 * (1 + np.cos(math.pi * (-1 + 2.0 * i[:width + 1] / alpha / (n - 1))))
    falling = 0.5 * (1 + np.cos(math.pi * (-2.0 / alpha + 1 + 2.0 * i[n - width - 1:] / alpha / (n - 1))))
    return np.concatenate([rising, np.ones(n - 2 * width - 2), falling])


def _taylor(n: int, nbar: int = 4, sll: float = 30, norm: bool = True) -> np.ndarray:
    """Taylor's window: nbar - 1 near sidelobes held at sll dB below the main lobe."""
    b = 10 ** (sll / 20)
    a = math.log(b + math.sqrt(b * b - 1)) / math.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    m = np.arange(1, nbar, dtype=np.float64)
    m2 = m * m
    fm = np.empty(nbar - 1)
    for k in range(nbar - 1):
        others = np.delete(m2, k)
        sign = 1.0 if k % 2 == 0 else -1.0
        fm[k] = sign * np.prod(1 - m2[k] / s2 / (a ** 2 + (m - 0.5) ** 2)) / (2 * np.prod(1 - m2[k] / others))

    def shape(i: Any) -> Any:
        return 1 + 2 * fm @ np.cos(2 * math.pi * m[:, None] * (np.atleast_1d(i) - n / 2.0 + 0.5) / n)

    w = shape(np.arange(n))
    return w / shape((n - 1) / 2) if norm else w


_WINDOWS: Dict[str, Callable[..., np.ndarray]] = {
    "hamming": _hamming, "hann": _hann, "kaiser": _kaiser, "bartlett": _bartlett, "nuttall": _nuttall,
    "gaussian": _gaussian, "general_gaussian": _general_gaussian, "exponential": _exponential,
    "triang": _triang, "bohman": _bohman, "blackman": _blackman, "cosine": _cosine, "tukey": _tukey,
    "taylor": _taylor,
}
_NEEDS_PARAMETERS = ("gaussian", "exponential", "kaiser")  # as paddle's get_window: pass a tuple


def _window_values(name: str, length: Any, params: Tuple[Any, ...], symmetric: bool) -> np.ndarray:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
        raise ValueError(f"get_window: win_length must be a non-negative integer, got {length!r}")
    length = int(length)
    if name == "exponential" and symmetric and (params[:1] or (None,))[0] is not None:
        raise ValueError("get_window: an 'exponential' window with fftbins=False takes no center (center must "
                         "be None)")
    if length <= 1:
        return np.ones(length)
    n = length if symmetric else length + 1
    try:
        values = _WINDOWS[name](n, *params)
    except TypeError as e:
        raise TypeError(f"get_window: wrong parameters {params} for the {name!r} window: {e}") from None
    return np.asarray(values, dtype=np.float64)[:length]


def _float_dtype(dtype: DTypeLike, fn: str) -> np.dtype:
    dt = convert_dtype(dtype)
    if dt is None or not is_floating(dt):
        raise TypeError(f"{fn}: dtype must be a floating-point type (float16/32/64), got {dtype!r}")
    return dt


def get_window(window: WindowSpec, win_length: int, fftbins: bool = True, dtype: DTypeLike = "float64") -> Tensor:
    """The window `window` (a name, or a tuple of a name and its parameters, e.g.
    ``('gaussian', 7)``) of win_length samples: periodic (for spectral analysis) when fftbins,
    else symmetric (for filter design), as scipy.signal.get_window and paddle's."""
    if isinstance(window, tuple):
        if not window:
            raise ValueError("get_window: window must be a name or a (name, *parameters) tuple, got ()")
        name, params = window[0], tuple(window[1:])
    elif isinstance(window, str):
        if window in _NEEDS_PARAMETERS:
            raise ValueError(f"get_window: the '{window}' window needs one or more parameters -- pass a tuple")
        name, params = window, ()
    else:
        raise ValueError(f"get_window: {type(window)} as window type is not supported (give a name or a tuple)")
    if name not in _WINDOWS:
        raise ValueError(f"get_window: unknown window type {name!r}; known: {sorted(_WINDOWS)}")
    dt = _float_dtype(dtype, "get_window")
    return wrap(move(_window_values(name, win_length, params, symmetric=not fftbins).astype(dt)))


def _tensor_window(fn: str, window: WindowSpec, window_length: int, periodic: bool, dtype: DTypeLike,
                   layout: Optional[str]) -> Tensor:
    if layout is not None:
        warnings.warn(f"{fn}: layout only supports 'strided'; ignored", stacklevel=3)
    return get_window(window, window_length, fftbins=periodic, dtype=_float_dtype(dtype, fn))


@creation_options(with_out=False)
def hann_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike = "float32",
                layout: Optional[str] = None) -> Tensor:
    """A Hann window of window_length samples (periodic unless `periodic` is False)."""
    return _tensor_window("hann_window", "hann", window_length, periodic, dtype, layout)


@creation_options(with_out=False)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: DTypeLike = "float32", layout: Optional[str] = None) -> Tensor:
    """The generalized Hamming window ``alpha - beta cos(2 pi n / N)`` of window_length samples."""
    w = _tensor_window("hamming_window", "hamming", window_length, periodic, "float64", layout)
    scale = beta / 0.46  # paddle's: an affine map of the standard (0.54, 0.46) Hamming window
    values = (alpha - scale * 0.54) + scale * w._array
    return wrap(values.astype(_float_dtype(dtype, "hamming_window")))


@creation_options(with_out=False)
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: DTypeLike = "float32",
                  layout: Optional[str] = None) -> Tensor:
    """A Kaiser window of window_length samples with shape parameter beta."""
    return _tensor_window("kaiser_window", ("kaiser", beta), window_length, periodic, dtype, layout)


@creation_options(with_out=False)
def blackman_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike = "float32",
                    layout: Optional[str] = None) -> Tensor:
    """A Blackman window of window_length samples."""
    return _tensor_window("blackman_window", "blackman", window_length, periodic, dtype, layout)


@creation_options(with_out=False)
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike = "float32",
                    layout: Optional[str] = None) -> Tensor:
    """A Bartlett (triangular, zero at the ends) window of window_length samples."""
    return _tensor_window("bartlett_window", "bartlett", window_length, periodic, dtype, layout)
