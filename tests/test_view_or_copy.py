"""Which shape ops give a view of their input and which give memory of their own, as paddle 3.3.1's
dygraph does, and tensors made from read-only NumPy arrays.

For each op, y = op(x) on x = arange(8).reshape(2, 2, 2), then ``y.scale_(10)``: the values x is left
with are paddle 3.3.1's, measured with this very program (CPU build): flip, rot90, roll, unstack,
tensor_split/hsplit/vsplit/dsplit into n pieces, split, chunk and crop copy (x unchanged); unbind,
tensor_split/hsplit/vsplit/dsplit at listed indices (paddle slices there), rot90 by a multiple of 4
(paddle returns x itself), transpose, moveaxis, reshape, narrow and x[:, 1] are views (x changed
where y lies). The same holds in the
graph (x an op's output, its leaf taking a gradient): there the view's write reaches x through
`pycoll.inplace_ops.write_through`, and a copy's must not. Gradients are checked against NumPy
by hand. The last tests: a tensor made from a read-only array (``np.frombuffer`` of bytes,
``np.broadcast_to``) is writeable, with the array's values, the array untouched (paddle copies).
"""
import numpy as np
import pytest

import pycoll

X0 = list(range(8))
SCALED = [10 * v for v in X0]
OPS = {  # name -> (y = op(x), x after y.scale_(10) on paddle 3.3.1)
    "flip": (lambda x: pycoll.flip(x, [0]), X0),
    "rot90": (lambda x: pycoll.rot90(x), X0),
    "roll": (lambda x: pycoll.roll(x, 1, 0), X0),
    "unstack": (lambda x: pycoll.unstack(x)[1], X0),
    "tensor_split": (lambda x: pycoll.tensor_split(x, 2, axis=1)[1], X0),
    "hsplit": (lambda x: pycoll.hsplit(x, 2)[1], X0),
    "vsplit": (lambda x: pycoll.vsplit(x, 2)[1], X0),
    "dsplit": (lambda x: pycoll.dsplit(x, 2)[1], X0),
    "split": (lambda x: pycoll.split(x, 2, axis=1)[1], X0),
    "chunk": (lambda x: pycoll.chunk(x, 2, axis=1)[1], X0),
    "crop": (lambda x: pycoll.crop(x, [2, 1, 2], [0, 1, 0]), X0),
    "rot90_k3": (lambda x: pycoll.rot90(x, 3), X0),
    "unbind": (lambda x: pycoll.unbind(x)[1], [0, 1, 2, 3, 40, 50, 60, 70]),
    "tensor_split_at": (lambda x: pycoll.tensor_split(x, [1], axis=1)[1], [0, 1, 20, 30, 4, 5, 60, 70]),
    "hsplit_at": (lambda x: pycoll.hsplit(x, [1])[1], [0, 1, 20, 30, 4, 5, 60, 70]),
    "vsplit_at": (lambda x: pycoll.vsplit(x, [1])[0], [0, 10, 20, 30, 4, 5, 6, 7]),
    "dsplit_at": (lambda x: pycoll.dsplit(x, [1])[1], [0, 10, 2, 30, 4, 50, 6, 70]),
    "rot90_k4": (lambda x: pycoll.rot90(x, 4, [1, 2]), SCALED),
    "transpose": (lambda x: pycoll.transpose(x, [2, 0, 1]), SCALED),
    "moveaxis": (lambda x: pycoll.moveaxis(x, 0, 2), SCALED),
    "reshape": (lambda x: pycoll.reshape(x, [4, 2]), SCALED),
    "narrow": (lambda x: pycoll.narrow(x, 1, 1, 1), [0, 1, 20, 30, 4, 5, 60, 70]),
    "getitem": (lambda x: x[:, 1], [0, 1, 20, 30, 4, 5, 60, 70]),
}


def _x(graph: bool):
    """x = arange(8).reshape(2, 2, 2); in the graph: leaf * 1, an op's output (a leaf that takes a
    gradient cannot be changed in place, nor through a view)."""
    leaf = pycoll.to_tensor(np.arange(8, dtype="float32").reshape(2, 2, 2), stop_gradient=not graph)
    return leaf, (leaf * 1 if graph else leaf)


@pytest.mark.parametrize("graph", [False, True], ids=["plain", "graph"])
@pytest.mark.parametrize("name", list(OPS))
def test_in_place_on_result_reaches_x_as_in_paddle(name, graph):
    op, x_after = OPS[name]
    _, x = _x(graph)
    y = op(x)
    want_y = y.numpy() * 10
    y.scale_(10.0)
    np.testing.assert_array_equal(y.numpy(), want_y)
    assert x.numpy().ravel().tolist() == x_after


@pytest.mark.parametrize("name", list(OPS))
def test_in_place_on_x_reaches_result_as_in_paddle(name):
    """The other way round: x.scale_(10) after y = op(x) changes y exactly where op views x
    (paddle 3.3.1: the same ops as above)."""
    op, x_after = OPS[name]
    _, x = _x(False)
    y = op(x)
    before = y.numpy().copy()
    x.scale_(10.0)
    assert (not np.array_equal(y.numpy(), before)) == (x_after != X0)


@pytest.mark.parametrize("name", ["flip", "rot90", "unstack", "tensor_split", "crop"])
def test_copies_are_c_contiguous_memory_of_their_own(name):
    x = pycoll.to_tensor(np.arange(8, dtype="float32").reshape(2, 2, 2))
    y = OPS[name][0](x)
    assert y.numpy().flags.c_contiguous and not np.shares_memory(y.numpy(), x.numpy())


def test_rot90_by_a_multiple_of_4_is_x_itself():
    """paddle 3.3.1: ``rot90(x, 0) is x`` and ``rot90(x, -4) is x`` are both True."""
    x = pycoll.ones([2, 2])
    assert pycoll.rot90(x, 0) is x and pycoll.rot90(x, -4) is x and pycoll.rot90(x, 2) is not x


def test_zeroing_a_flip_leaves_its_sum_and_input():
    """The probe's case: z = x + flip(x), then flip(x).zero_(): x stays [1, 2] (paddle 3.3.1), z [3, 3]."""
    x = pycoll.to_tensor([1.0, 2.0])
    y = pycoll.flip(x, [0])
    z = x + y
    y.zero_()
    assert x.numpy().tolist() == [1.0, 2.0] and z.numpy().tolist() == [3.0, 3.0] and y.numpy().tolist() == [0, 0]


W = np.arange(1.0, 9.0).reshape(2, 2, 2)


def test_gradient_through_a_scaled_flip():
    """loss = sum(flip(x, [0]) * 10 * w): x's gradient is 10 * flip(w, [0])."""
    leaf, x = _x(True)
    y = pycoll.flip(x, [0])
    y.scale_(10.0)
    (y * pycoll.to_tensor(W.astype("float32"))).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), 10 * W[::-1])


def test_gradient_through_scaled_tensor_split_pieces():
    """pieces a, b = tensor_split(x, 2, axis=1); b.scale_(3); loss = sum(a * w[:, :1] + b * w[:, 1:]):
    x's gradient is w with its second half along axis 1 times 3."""
    leaf, x = _x(True)
    a, b = pycoll.tensor_split(x, 2, axis=1)
    b.scale_(3.0)
    w = pycoll.to_tensor(W.astype("float32"))
    ((a * w[:, :1]).sum() + (b * w[:, 1:]).sum()).backward()
    want = W.copy()
    want[:, 1:] *= 3
    np.testing.assert_array_equal(leaf.grad.numpy(), want)
    assert x.numpy().ravel().tolist() == X0


def test_gradient_through_a_zeroed_unstack_slice():
    """rows = unstack(x); rows[0].zero_(); loss = sum(rows[0] * w[0] + rows[1] * w[1]): row 0 of x's
    gradient is 0 (zero_ cuts it), row 1 is w[1]; x is unchanged."""
    leaf, x = _x(True)
    rows = pycoll.unstack(x)
    rows[0].zero_()
    w = pycoll.to_tensor(W.astype("float32"))
    ((rows[0] * w[0]).sum() + (rows[1] * w[1]).sum()).backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.stack([np.zeros((2, 2)), W[1]]))
    assert x.numpy().ravel().tolist() == X0


# ---- tensors from read-only arrays -------------------------------------------------------------

def _read_only_arrays():
    frozen = np.frombuffer(np.arange(4, dtype="float32").tobytes(), dtype="float32")
    spread = np.broadcast_to(np.arange(2, dtype="float32"), (2, 2))
    assert not frozen.flags.writeable and not spread.flags.writeable
    return {"frombuffer": frozen, "broadcast_to": spread}


MAKERS = {
    "to_tensor": pycoll.to_tensor,
    "Tensor": pycoll.Tensor,
    "as_tensor": pycoll.as_tensor,
    "asarray": pycoll.asarray,
    "from_numpy": pycoll.from_numpy,
    "assign": pycoll.assign,
}


@pytest.mark.parametrize("source", ["frombuffer", "broadcast_to"])
@pytest.mark.parametrize("maker", list(MAKERS))
def test_tensor_of_a_read_only_array_is_writeable(maker, source):
    """paddle 3.3.1 gives, for each maker, 2 * a + 1 after scale_(2) and add_(ones), a unchanged."""
    a = _read_only_arrays()[source]
    kept = a.copy()
    t = MAKERS[maker](a)
    assert t.numpy().tolist() == kept.tolist() and t.numpy().flags.writeable
    t.scale_(2.0)
    t.add_(pycoll.ones(t.shape))
    np.testing.assert_array_equal(t.numpy(), 2 * kept + 1)
    np.testing.assert_array_equal(a, kept)


def test_from_numpy_shares_a_writeable_array_and_to_tensor_copies_it():
    """pycoll's zero-copy interop (README) is from_numpy's and from_dlpack's; to_tensor copies, as
    paddle's does (only a read-only array is copied by from_numpy)."""
    buf = np.zeros(3, dtype="float32")
    t, u = pycoll.to_tensor(buf), pycoll.from_numpy(buf)
    buf[:] = 7
    assert t.numpy().tolist() == [0, 0, 0] and u.numpy().tolist() == [7, 7, 7]
