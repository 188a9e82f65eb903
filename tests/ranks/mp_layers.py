"""The model-parallel layers and split on N ranks against the unsplit layers in one process.

Every rank draws the same weights, inputs and output gradients (one seeded NumPy generator), gives
its block of the weights to the split layer and the whole weights to the plain nn layer, and
checks in float64 that outputs, input gradients and weight gradients (its block of them) agree.
The cases run over the world and, on 4 ranks, over the sub-groups [0, 1] and [2, 3] as well.
Then: seeded initialisation, split against the layers, and the errors for bad sizes.
"""
import numpy as np
from expect import expect

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.nn import Parameter
from pycoll.parallel.mp_layers import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding
from pycoll.parallel.mp_ops import _c_split
from pycoll.parallel.mp_split import split, split_layers

TOL = dict(rtol=1e-11, atol=1e-12)
SHAPES = [(5,), (2, 3)]  # leading shapes of the inputs


def put(layer, attr, value):
    setattr(layer, attr, Parameter(np.array(value, dtype=np.float64)))


def block(a, axis, rank, n):
    return np.split(np.asarray(a), n, axis=axis)[rank]


def leaf(a):
    t = pycoll.to_tensor(np.asarray(a, dtype=np.float64))
    t.stop_gradient = False
    return t


def close(got, want, what):
    got = got.numpy() if hasattr(got, "numpy") else got
    assert got.shape == np.shape(want), f"{what}: shape {got.shape}, expected {np.shape(want)}"
    np.testing.assert_allclose(got, want, err_msg=what, **TOL)


def backward(y, g):
    (y * pycoll.to_tensor(g)).sum().backward()


def column(group, rank, n, rng, lead, gather):
    fin, fout = 5, 3 * n
    W, b = rng.standard_normal((fin, fout)), rng.standard_normal(fout)
    x, G = rng.standard_normal(lead + (fin,)), rng.standard_normal(lead + (fout,))
    layer = ColumnParallelLinear(fin, fout, has_bias=True, gather_output=gather, group=group)
    assert layer.weight.shape == [fin, fout // n] and layer.bias.shape == [fout // n]
    put(layer, "weight", block(W, 1, rank, n))
    put(layer, "bias", block(b, 0, rank, n))
    ref = nn.Linear(fin, fout)
    put(ref, "weight", W)
    put(ref, "bias", b)
    xs, xr = leaf(x), leaf(x)
    y, yr = layer(xs), ref(xr)
    mine = (lambda a: a) if gather else (lambda a: block(a, -1, rank, n))
    close(y, mine(yr.numpy()), f"column gather={gather} {lead}: output")
    backward(y, mine(G))
    backward(yr, G)
    close(xs.grad, xr.grad.numpy(), f"column gather={gather} {lead}: input grad")
    close(layer.weight.grad, block(ref.weight.grad.numpy(), 1, rank, n), f"column {lead}: weight grad")
    close(layer.bias.grad, block(ref.bias.grad.numpy(), 0, rank, n), f"column {lead}: bias grad")


def row(group, rank, n, rng, lead, parallel_input):
    fin, fout = 2 * n, 4
    W, b = rng.standard_normal((fin, fout)), rng.standard_normal(fout)
    x, G = rng.standard_normal(lead + (fin,)), rng.standard_normal(lead + (fout,))
    layer = RowParallelLinear(fin, fout, input_is_parallel=parallel_input, group=group)
    assert layer.weight.shape == [fin // n, fout] and layer.bias.shape == [fout]
    put(layer, "weight", block(W, 0, rank, n))
    put(layer, "bias", b)
    ref = nn.Linear(fin, fout)
    put(ref, "weight", W)
    put(ref, "bias", b)
    xs, xr = leaf(block(x, -1, rank, n) if parallel_input else x), leaf(x)
    y, yr = layer(xs), ref(xr)
    close(y, yr.numpy(), f"row parallel_input={parallel_input} {lead}: output")  # bias added once
    backward(y, G)
    backward(yr, G)
    want_gx = block(xr.grad.numpy(), -1, rank, n) if parallel_input else xr.grad.numpy()
    close(xs.grad, want_gx, f"row parallel_input={parallel_input} {lead}: input grad")
    close(layer.weight.grad, block(ref.weight.grad.numpy(), 0, rank, n), f"row {lead}: weight grad")
    close(layer.bias.grad, ref.bias.grad.numpy(), f"row {lead}: bias grad")


def mlp(group, rank, n, rng, lead):
    """Column(gather_output=False) -> tanh -> Row(input_is_parallel=True): no gather in between."""
    fin, hidden, fout = 3, 2 * n, 2
    W1, b1 = rng.standard_normal((fin, hidden)), rng.standard_normal(hidden)
    W2, b2 = rng.standard_normal((hidden, fout)), rng.standard_normal(fout)
    x, G = rng.standard_normal(lead + (fin,)), rng.standard_normal(lead + (fout,))
    col = ColumnParallelLinear(fin, hidden, has_bias=True, gather_output=False, group=group)
    rowl = RowParallelLinear(hidden, fout, input_is_parallel=True, group=group)
    put(col, "weight", block(W1, 1, rank, n))
    put(col, "bias", block(b1, 0, rank, n))
    put(rowl, "weight", block(W2, 0, rank, n))
    put(rowl, "bias", b2)
    ref1, ref2 = nn.Linear(fin, hidden), nn.Linear(hidden, fout)
    for layer, w, b in ((ref1, W1, b1), (ref2, W2, b2)):
        put(layer, "weight", w)
        put(layer, "bias", b)
    xs, xr = leaf(x), leaf(x)
    y, yr = rowl(pycoll.tanh(col(xs))), ref2(pycoll.tanh(ref1(xr)))
    close(y, yr.numpy(), f"mlp {lead}: output")
    backward(y, G)
    backward(yr, G)
    close(xs.grad, xr.grad.numpy(), f"mlp {lead}: input grad")
    close(col.weight.grad, block(ref1.weight.grad.numpy(), 1, rank, n), "mlp: first weight grad")
    close(col.bias.grad, block(ref1.bias.grad.numpy(), 0, rank, n), "mlp: first bias grad")
    close(rowl.weight.grad, block(ref2.weight.grad.numpy(), 0, rank, n), "mlp: second weight grad")
    close(rowl.bias.grad, ref2.bias.grad.numpy(), "mlp: second bias grad")


def embedding(group, rank, n, rng, lead):
    vocab, dim = 3 * n, 4
    W = rng.standard_normal((vocab, dim))
    ids = rng.integers(0, vocab, lead + (4,))
    ids.flat[:2] = [0, vocab - 1]  # both ends of the table (and, with 20+ ids, repeats)
    G = rng.standard_normal(ids.shape + (dim,))
    layer = VocabParallelEmbedding(vocab, dim, group=group)
    assert layer.weight.shape == [vocab // n, dim]
    put(layer, "weight", block(W, 0, rank, n))
    ref = nn.Embedding(vocab, dim)
    put(ref, "weight", W)
    y, yr = layer(pycoll.to_tensor(ids)), ref(pycoll.to_tensor(ids))
    close(y, yr.numpy(), f"embedding {lead}: output")
    backward(y, G)
    backward(yr, G)
    close(layer.weight.grad, block(ref.weight.grad.numpy(), 0, rank, n), f"embedding {lead}: weight grad")


def numeric_cases(group, rank, n):
    rng = np.random.default_rng(2024)  # the same draws on every rank
    count = 0
    for lead in SHAPES:
        for gather in (True, False):
            column(group, rank, n, rng, lead, gather)
            row(group, rank, n, rng, lead, gather)
            count += 2
        mlp(group, rank, n, rng, lead)
        embedding(group, rank, n, rng, lead)
        count += 2
    return count


def gathered(param, axis, group):
    parts = []
    dist.all_gather(parts, param, group=group)
    return np.concatenate([t.numpy() for t in parts], axis=axis)


def seeded_init(group, n):
    """Same seed: the blocks, gathered, are the plain layer's weights, bit for bit."""
    for make_split, make_plain, axes in [
        (lambda: ColumnParallelLinear(6, 4 * n, has_bias=True, mp_group=group), lambda: nn.Linear(6, 4 * n), (1, 0)),
        (lambda: RowParallelLinear(4 * n, 6, group=group), lambda: nn.Linear(4 * n, 6), (0, None)),
        (lambda: VocabParallelEmbedding(4 * n, 6, group=group), lambda: nn.Embedding(4 * n, 6), (0,)),
    ]:
        pycoll.seed(99)
        layer = make_split()
        pycoll.seed(99)
        plain = make_plain()
        for p, q, axis in zip(layer.parameters(), plain.parameters(), axes):
            assert p.is_distributed == (axis is not None), (type(layer).__name__, p.name)
            whole = p.numpy() if axis is None else gathered(p, axis, group)
            assert np.array_equal(whole, q.numpy()), f"{type(layer).__name__}: {p.name} differs"
    return 3


def split_cases(rank, n):
    """split over the world against the layers it stands for, and reuse by name."""
    rng = np.random.default_rng(7)
    x = pycoll.to_tensor(rng.standard_normal((3, 4 * n)).astype(np.float32))
    ids = pycoll.to_tensor(rng.integers(0, 4 * n, (3, 5)))
    cases = [
        ("linear", x, [4 * n, 6], 0, True, lambda: RowParallelLinear(4 * n, 6)),
        ("linear", x, [4 * n, 2 * n], 1, True, lambda: ColumnParallelLinear(4 * n, 2 * n, has_bias=True)),
        ("linear", x, [4 * n, 2 * n], 1, False,
         lambda: ColumnParallelLinear(4 * n, 2 * n, has_bias=True, gather_output=False)),
        ("embedding", ids, [4 * n, 3], 0, True, lambda: VocabParallelEmbedding(4 * n, 3)),
    ]
    for i, (operation, inp, size, axis, gather, make) in enumerate(cases):
        name = f"split_{i}"
        pycoll.seed(5)
        y = split(inp, size, operation, axis=axis, num_partitions=n, gather_out=gather, name=name)
        pycoll.seed(5)
        want = make()(inp)
        assert np.array_equal(y.numpy(), want.numpy()), f"split {name} differs from its layer"
        layer = split_layers()[name]
        assert type(layer) is type(make()) and len(layer.parameters()) == len(make().parameters())
        again = split(inp, size, operation, axis=axis, num_partitions=n, gather_out=gather, name=name)
        assert split_layers()[name] is layer and np.array_equal(again.numpy(), y.numpy())
    # paddle's pairing: a column split left split (gather_out=False) feeds a row split as it is
    pycoll.seed(6)
    hidden = split(x, [4 * n, 2 * n], "linear", axis=1, num_partitions=n, gather_out=False, name="pair_col")
    paired = split(hidden, [2 * n, 5], "linear", axis=0, num_partitions=n, name="pair_row")
    pycoll.seed(6)
    whole_hidden = ColumnParallelLinear(4 * n, 2 * n, has_bias=True)(x)
    want = RowParallelLinear(2 * n, 5)(whole_hidden)
    assert np.allclose(paired.numpy(), want.numpy(), rtol=1e-5, atol=1e-6), (paired.numpy(), want.numpy())
    # training through split_layers(): one SGD step on every split parameter changes the outputs
    params = [p for layer in split_layers().values() for p in layer.parameters()]
    loss = split(x, [4 * n, 2 * n], "linear", axis=1, num_partitions=n, name="split_1").sum()
    loss.backward()
    assert all(p.grad is not None for p in split_layers()["split_1"].parameters())
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=params)
    opt.step()
    after = split(x, [4 * n, 2 * n], "linear", axis=1, num_partitions=n, name="split_1").sum()
    assert float(after) < float(loss), (float(after), float(loss))
    # without a name (paddle's default) the call's line names the layer: one layer per line
    unnamed = [split(x, [4 * n, 2 * n], "linear", axis=1, num_partitions=n) for _ in range(2)]
    here = [key for key in split_layers() if key.startswith("linear@mp_layers.py:")]
    assert len(here) == 1 and np.array_equal(unnamed[0].numpy(), unnamed[1].numpy()), here
    try:
        split(x, [4 * n, 2 * n], "linear", axis=0, num_partitions=n, name="split_1")
    except ValueError as e:
        assert "name='split_1' was first used with" in str(e), e
    else:
        raise AssertionError("reusing a split name for another split must fail")
    return len(cases) + 2


def error_cases(rank, n):
    odd = 4 * n + 1  # never divides by 2 or 4
    x = pycoll.to_tensor(np.ones((2, 4 * n), np.float32))
    checks = [
        (lambda: ColumnParallelLinear(4, odd), f"out_features={odd}", f"group size {n}"),
        (lambda: RowParallelLinear(odd, 4), f"in_features={odd}", f"group size {n}"),
        (lambda: VocabParallelEmbedding(odd, 4), f"num_embeddings={odd}", f"group size {n}"),
        (lambda: RowParallelLinear(2 * n, 3)(x), "x has shape [2, %d]" % (4 * n), "must be %d" % (2 * n)),
        (lambda: _c_split(pycoll.to_tensor(np.ones((2, odd)))), f"[2, {odd}]", f"group size {n}"),
        (lambda: VocabParallelEmbedding(n, 2)(pycoll.to_tensor([0, n])), f"[0, {n})"),
        (lambda: split(x, [4 * n, odd], "linear", axis=1, num_partitions=n, name="bad"),
         f"out_features={odd}"),
        (lambda: split(x, [4 * n, 4], "linear", axis=1, num_partitions=n + 1, name="bad"),
         f"num_partitions={n + 1}", f"num_partitions={n}"),
        (lambda: split(x, [4 * n, 4], "embedding", axis=1, num_partitions=n, name="bad"), "axis=1"),
        (lambda: split(x, [4 * n, 4], "linear", axis=0, num_partitions=n, gather_out=False,
                       name="bad"), "gather_out=False"),
    ]
    for fn, *fragments in checks:
        expect(ValueError, fragments, fn)
    assert "bad" not in split_layers(), "a failed split must not leave a layer behind"
    return len(checks)


def assigned_blocks(rank, n):
    """An Assign of this rank's block gives that block (paddle's tensor-parallel tests pass each
    rank its slice); an Assign of the whole weight is cut; paddle's attribute names are there."""
    whole = np.arange(4 * 4 * n, dtype=np.float32).reshape(4, 4 * n)
    mine = block(whole, 1, rank, n)
    attr = lambda value: pycoll.ParamAttr(initializer=nn.initializer.Assign(value))  # noqa: E731
    for value in (mine, whole):
        column = ColumnParallelLinear(4, 4 * n, weight_attr=attr(value), gather_output=False)
        np.testing.assert_array_equal(column.weight.numpy(), mine)
        assert column.weight.is_distributed
    row = RowParallelLinear(4 * n, 4, weight_attr=attr(mine.T.copy()), input_is_parallel=True)
    np.testing.assert_array_equal(row.weight.numpy(), mine.T)
    table = VocabParallelEmbedding(4 * n, 4, weight_attr=attr(mine.T.copy()))
    np.testing.assert_array_equal(table.weight.numpy(), mine.T)
    assert (table.vocab_start_index, table.origin_num_embeddings) == (4 * rank, 4 * n)
    assert (column.output_size_per_partition, row.input_size_per_partition) == (4, 4)
    assert (column.world_size, column.is_mp, column.model_parallel_group) == (n, n > 1, column.group)
    return 6


def main():
    # before any parallel environment: refused when made, naming fleet.init (paddle fails there too)
    expect(RuntimeError, ["no parallel environment yet", "fleet.init(is_collective=True"],
           ColumnParallelLinear, 8, 8)
    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    count = numeric_cases(None, rank, n) + seeded_init(None, n) + split_cases(rank, n)
    count += assigned_blocks(rank, n)
    count += error_cases(rank, n)
    if n == 4:
        pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        mine, other = pairs[rank // 2], pairs[1 - rank // 2]
        count += numeric_cases(mine, dist.get_rank(mine), 2) + seeded_init(mine, 2)
        expect(ValueError, ["is not a member of"], ColumnParallelLinear, 4, 4, group=other)
        count += 1
    print(f"mp layers OK rank={rank} world={n} cases={count}", flush=True)


if __name__ == "__main__":
    main()
