"""``einsum`` (paddle.einsum): Einstein summation over NumPy's/CuPy's ``einsum``, with gradients.

The equation is first made explicit: each ``...`` becomes letters of its own (the operands'
broadcast dimensions, aligned from the right) and an implicit output is ``...`` followed by the
letters that appear once, in alphabetical order. A label of size 1 in one operand broadcasts
against the others. The gradient of an operand is one more einsum of the output's gradient with
the other operands; labels that appear in that operand alone are broadcast back, a label repeated
in it (a diagonal) is spread back onto the diagonal, and broadcast size-1 labels are summed.
"""
from __future__ import annotations

import string
from typing import Any, Dict, List, Sequence, Tuple

from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.device import array_module
from pycoll.shape_ops import unbroadcast
from pycoll.tensor import Tensor


@accumulates_in_float32
def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Sum the products of the operands' elements as `equation` says ('ij,jk->ik', 'ii',
    '...ij,...jk'). Every operand must have the same dtype."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    tensors = list(placed("_all_whole", *[as_tensor(t) for t in operands]))  # auto-parallel: computed whole
    if not tensors:
        raise ValueError("einsum needs at least one operand")
    arrays = [t._array for t in tensors]
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError(f"einsum: the operands must have the same dtype, got {[str(a.dtype) for a in arrays]}")
    terms, output = _explicit(equation.replace(" ", ""), [a.shape for a in arrays])
    sizes = _sizes(terms, [a.shape for a in arrays], equation)
    xp = array_module(arrays[0])
    full = [xp.broadcast_to(a, [sizes[c] for c in term]) for a, term in zip(arrays, terms)]
    # NumPy's optimized path fails on a label of size 0 (the plain one sums nothing into zeros)
    out = xp.einsum(f"{','.join(terms)}->{output}", *full, optimize=all(a.size for a in full))
    wanted = [needs_grad(t) for t in tensors]

    def backward(g: Any) -> list:
        return [_operand_grad(g, output, full, terms, i, sizes, arrays[i].shape) if wanted[i] else None
                for i in range(len(arrays))]
    return op_output(out, backward, *tensors)


def _explicit(equation: str, shapes: Sequence[Tuple[int, ...]]) -> Tuple[List[str], str]:
    """The input terms and the output term of `equation`, with ``...`` spelt out in letters."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: equation {equation!r} has {len(terms)} operand terms, got {len(shapes)} operands")
    used = set(equation) - set(".,->")
    if not all(c in string.ascii_letters for c in used):
        raise ValueError(f"einsum: labels must be letters, got equation {equation!r}")
    spare = [c for c in string.ascii_letters if c not in used]
    widths = []
    for term, shape in zip(terms, shapes):
        named = len(term.replace("...", ""))
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise ValueError(f"einsum: a term may hold one '...', got {term!r} in {equation!r}")
        width = len(shape) - named if "..." in term else 0
        if width < 0 or (width == 0 and "..." not in term and named != len(shape)):
            raise ValueError(f"einsum: term {term!r} does not fit an operand of shape {list(shape)}")
        widths.append(width)
    dots = "".join(spare[:max(widths)])
    terms = [t.replace("...", dots[len(dots) - w:]) for t, w in zip(terms, widths)]
    if arrow:
        if dots and "..." not in rhs:
            raise ValueError(f"einsum: the operands have broadcast dimensions ('...'), so the output of "
                             f"{equation!r} must have '...' too")
        output = rhs.replace("...", dots)
        unknown = set(output) - set("".join(terms))
        if unknown or len(set(output)) != len(output):
            raise ValueError(f"einsum: each output label must appear once and in an operand, got {equation!r}")
    else:
        named = lhs.replace("...", "").replace(",", "")
        output = dots + "".join(sorted(c for c in set(named) if named.count(c) == 1))
    return terms, output


def _sizes(terms: Sequence[str], shapes: Sequence[Tuple[int, ...]], equation: str) -> Dict[str, int]:
    """Each label's size; a size of 1 gives way to any other."""
    sizes: Dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        for c, n in zip(term, shape):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: label {c!r} of {equation!r} has sizes {sizes[c]} and {n}")
            if sizes.get(c, 1) == 1:  # (a size of 0 does not give way)
                sizes[c] = n
    return sizes


def _operand_grad(g: Any, output: str, full: Sequence[Any], terms: Sequence[str], i: int,
                  sizes: Dict[str, int], shape: Tuple[int, ...]) -> Any:
    xp = array_module(g)
    term = terms[i]
    others = [j for j in range(len(terms)) if j != i]
    elsewhere = set(output).union(*(terms[j] for j in others))
    labels = list(dict.fromkeys(term))  # each label once, in the term's order
    found = [c for c in labels if c in elsewhere]
    grad = xp.einsum(f"{','.join([output] + [terms[j] for j in others])}->{''.join(found)}",
                     g, *(full[j] for j in others), optimize=bool(g.size) and all(full[j].size for j in others))
    for k, c in enumerate(labels):  # a label of this operand alone: its gradient is the same along it
        if c not in elsewhere:
            grad = xp.expand_dims(grad, k)
    grad = xp.broadcast_to(grad, [sizes[c] for c in labels])
    if len(labels) < len(term):  # a repeated label: back onto the diagonal, through identities
        spelt, eyes = diagonal_spelling(term, output)
        grad = xp.einsum(f"{''.join(labels)},{','.join(t for t, _ in eyes)}->{spelt}", grad,
                         *(xp.eye(sizes[c], dtype=g.dtype) for _, c in eyes))
    return unbroadcast(grad, shape)


def diagonal_spelling(term: str, output: str) -> Tuple[str, List[Tuple[str, str]]]:
    """`term` with each repeat of a label spelt as a fresh letter, and the identity matrices that
    tie each fresh letter to its label: (spelling, [(two-letter subscript, label), ...])."""
    spare = iter(c for c in string.ascii_letters if c not in term and c not in output)
    spelt, eyes, seen = "", [], set()
    for c in term:
        if c in seen:
            fresh = next(spare)
            spelt += fresh
            eyes.append((c + fresh, c))
        else:
            spelt += c
            seen.add(c)
    return spelt, eyes
