"""Derivatives by central differences, the reference the tests of gradients compare with."""
import numpy as np


def central_grad(fn, x, eps=1e-6):
    """d sum(fn(x)) / dx by central differences (float64 ``x``; ``fn`` maps an array to an array
    or a number)."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (np.sum(fn(hi)) - np.sum(fn(lo))) / (2 * eps)
    return g
