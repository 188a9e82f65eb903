"""pycoll.geometric's neighbor sampling and subgraph reindexing, and paddle.incubate's graph_reindex,
graph_sample_neighbors and graph_khop_sampler. Reindexing is deterministic: its values were
measured on paddle 3.3.1's CPU build with the same calls (and are cross-checked against a
dictionary-based reference). Sampling is random: its documented properties are checked, and its
frequencies against the uniform / weight-proportional law."""
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.geometric as geo

# paddle's doc graph in CSC form: edges (3, 0), (7, 0), (0, 1), (9, 1), (1, 2), (4, 3), (2, 4),
# (9, 5), (3, 5), (9, 6), (1, 6), (9, 8), (7, 8)
ROW = [3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7]
COLPTR = [0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13]
NODES = [0, 8, 1, 2]


def T(v, dtype="int64"):
    return pycoll.to_tensor(v, dtype=dtype)


def reference_reindex(x, neighbors, count):
    """paddle's numbering, by a dictionary: x first (a repeated value: its last place), then new
    neighbors by first appearance; count in blocks of len(x)."""
    ids = {v: i for i, v in enumerate(x)}
    out_nodes = list(x)
    for v in neighbors:
        if v not in ids:
            ids[v] = len(out_nodes)
            out_nodes.append(v)
    dst = [ids[x[k % len(x)]] for k, c in enumerate(count) for _ in range(c)]
    return [ids[v] for v in neighbors], dst, out_nodes


# (x, neighbors, count) -> paddle 3.3.1's (reindex_src, reindex_dst, out_nodes)
REINDEX_CASES = [
    ([0, 1, 2], [8, 9, 0, 4, 7, 6, 7], [2, 3, 2],
     ([3, 4, 0, 5, 6, 7, 6], [0, 0, 1, 1, 1, 2, 2], [0, 1, 2, 8, 9, 4, 7, 6])),
    ([0, 1, 2], [8, 9, 0, 4, 7, 6, 7, 0, 2, 3, 5, 1], [2, 3, 2, 1, 3, 1],  # two edge types, concatenated
     ([3, 4, 0, 5, 6, 7, 6, 0, 2, 8, 9, 1], [0, 0, 1, 1, 1, 2, 2, 0, 1, 1, 1, 2], [0, 1, 2, 8, 9, 4, 7, 6, 3, 5])),
    ([5, 5, 2], [8, 9, 0, 4, 7, 6, 7], [2, 3, 2],  # a repeated x value
     ([3, 4, 5, 6, 7, 8, 7], [1, 1, 1, 1, 1, 2, 2], [5, 5, 2, 8, 9, 0, 4, 7, 6])),
    ([10, 5, 2], [2, 10, 3, 5, 3], [2, 1, 2],  # neighbors that are input nodes
     ([2, 0, 3, 1, 3], [0, 0, 1, 2, 2], [10, 5, 2, 3])),
    ([0, 1, 2], [], [0, 0, 0], ([], [], [0, 1, 2])),
]


@pytest.mark.parametrize("x, neighbors, count, want", REINDEX_CASES)
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_reindex_graph_equals_paddles(x, neighbors, count, want, dtype):
    out = geo.reindex_graph(T(x, dtype), T(neighbors, dtype), T(count, "int32"))
    assert [t.numpy().tolist() for t in out] == [list(w) for w in want]
    assert [t.numpy().tolist() for t in out] == [list(w) for w in reference_reindex(x, neighbors, count)]
    assert all(str(t.dtype) == dtype for t in out)


def test_reindex_heter_graph_equals_paddles_and_the_concatenated_form():
    x = T([0, 1, 2])
    neighbors = [T([8, 9, 0, 4, 7, 6, 7]), T([0, 2, 3, 5, 1])]
    count = [T([2, 3, 2], "int32"), T([1, 3, 1], "int32")]
    out = geo.reindex_heter_graph(x, neighbors, count)
    assert [t.numpy().tolist() for t in out] == [list(w) for w in REINDEX_CASES[1][3]]
    assert [t.numpy().tolist() for t in geo.reindex_heter_graph(x, tuple(neighbors[:1]), tuple(count[:1]))] == \
        [list(w) for w in REINDEX_CASES[0][3]]


def test_reindex_graph_matches_a_dictionary_on_random_subgraphs():
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = rng.choice(50, 6, replace=False).tolist()
        count = rng.integers(0, 5, 12).tolist()  # two edge types
        neighbors = rng.integers(0, 50, sum(count)).tolist()
        out = geo.reindex_graph(T(x), T(neighbors), T(count, "int32"))
        assert [t.numpy().tolist() for t in out] == [list(w) for w in reference_reindex(x, neighbors, count)]


def test_reindex_refusals():
    x, nb = T([0, 1, 2]), T([8, 9, 0, 4, 7, 6, 7])
    with pytest.raises(ValueError, match="count must add up to the 7 neighbors given, got 6"):
        geo.reindex_graph(x, nb, T([2, 3, 1], "int32"))  # paddle: garbage in reindex_dst
    with pytest.raises(ValueError, match=r"count must hold len\(x\) = 3 counts per edge type, got 2"):
        geo.reindex_graph(x, nb, T([2, 5], "int32"))
    with pytest.raises(ValueError, match="neighbors must have the dtype .*int32.*got int64"):
        geo.reindex_graph(T([0, 1, 2], "int32"), nb, T([2, 3, 2], "int32"))
    with pytest.raises(TypeError, match="x must be an int32 or int64 tensor, got dtype float32"):
        geo.reindex_graph(T([0., 1., 2.], "float32"), nb, T([2, 3, 2], "int32"))
    with pytest.raises(ValueError, match="x must hold at least one node"):
        geo.reindex_graph(T([]), T([]), T([], "int32"))
    with pytest.raises(ValueError, match="one entry per edge type each, got 2 and 1"):
        geo.reindex_heter_graph(x, [nb, nb], [T([2, 3, 2], "int32")])
    with pytest.raises(TypeError, match="neighbors must be a non-empty list or tuple"):
        geo.reindex_heter_graph(x, nb, [T([2, 3, 2], "int32")])


def neighbor_sets():
    return [set(ROW[COLPTR[v]:COLPTR[v + 1]]) for v in range(len(COLPTR) - 1)]


@pytest.mark.parametrize("sample_size", [-1, 0, 1, 2, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_sampled_neighbors_are_neighbors_without_replacement(sample_size, weighted):
    eids = np.arange(13) + 100
    weight = [() if not weighted else (T(np.linspace(0.1, 2, 13), "float32"),)][0]
    fn = geo.weighted_sample_neighbors if weighted else geo.sample_neighbors
    nodes = NODES + [5, 6, 7, 3]
    out, count, out_eids = fn(T(ROW), T(COLPTR), *weight, T(nodes), sample_size=sample_size, eids=T(eids),
                              return_eids=True)
    assert str(count.dtype) == "int32" and str(out.dtype) == "int64" and str(out_eids.dtype) == "int64"
    degrees = [COLPTR[v + 1] - COLPTR[v] for v in nodes]
    want_counts = degrees if sample_size < 0 else [min(d, sample_size) for d in degrees]
    assert count.numpy().tolist() == want_counts
    ends = np.cumsum(want_counts)
    for v, c, end in zip(nodes, want_counts, ends):
        got, got_eids = out.numpy()[end - c:end], out_eids.numpy()[end - c:end] - 100
        assert len(set(got_eids.tolist())) == c  # no edge twice
        assert all(COLPTR[v] <= e < COLPTR[v + 1] for e in got_eids)  # the node's own edges
        assert [ROW[e] for e in got_eids] == got.tolist()  # eids name the sampled edges
        assert set(got.tolist()) <= neighbor_sets()[v]
        if c == COLPTR[v + 1] - COLPTR[v]:
            assert got.tolist() == ROW[COLPTR[v]:COLPTR[v + 1]]  # all of them, in CSC order
    two = fn(T(ROW), T(COLPTR), *weight, T(nodes), sample_size=sample_size)
    assert len(two) == 2 and two[1].numpy().tolist() == want_counts


def test_sampling_takes_row_dtype_and_layouts():
    out, count = geo.sample_neighbors(T([ROW], "int32").reshape([-1, 1]), T(COLPTR, "int32").reshape([-1, 1]),
                                      T(NODES, "int32"), sample_size=2)
    assert str(out.dtype) == "int32" and str(count.dtype) == "int32" and count.numpy().tolist() == [2, 2, 2, 1]


def test_uniform_sampling_is_uniform_and_seeded():
    # one node with 10 neighbors, asked 4000 times for 3 of them: each edge drawn with chance 0.3
    row, colptr, nodes = T(np.arange(10) * 7), T([0, 10]), T(np.zeros(4000, np.int64))
    pycoll.seed(7)
    out, count = geo.sample_neighbors(row, colptr, nodes, sample_size=3)
    freq = np.bincount(out.numpy() // 7, minlength=10) / 4000
    assert np.abs(freq - 0.3).max() < 5 * np.sqrt(0.3 * 0.7 / 4000)
    picks = out.numpy().reshape(4000, 3)
    assert (np.sort(picks, 1)[:, 1:] != np.sort(picks, 1)[:, :-1]).all()  # without replacement
    pycoll.seed(7)
    assert geo.sample_neighbors(row, colptr, nodes, sample_size=3)[0].numpy().tolist() == out.numpy().tolist()


def test_weighted_sampling_follows_the_weights():
    weights = np.array([1., 2., 3., 4., 0.], np.float32)
    row, colptr, nodes = T(np.arange(5)), T([0, 5]), T(np.zeros(4000, np.int64))
    pycoll.seed(11)
    out, _ = geo.weighted_sample_neighbors(row, colptr, T(weights, "float32"), nodes, sample_size=1)
    p = weights / weights.sum()
    freq = np.bincount(out.numpy(), minlength=5) / 4000
    assert np.abs(freq - p).max() < 5 * np.sqrt(p.max() * (1 - p.max()) / 4000) and freq[4] == 0
    # two of them: heavier edges are kept more often; the weight-0 edge is never needed
    out, _ = geo.weighted_sample_neighbors(row, colptr, T(weights, "float32"), nodes, sample_size=2)
    freq = np.bincount(out.numpy(), minlength=5) / 4000
    assert freq[0] < freq[1] < freq[2] < freq[3] and freq[4] == 0
    # P(edge 3 among two) = p3 + sum_{i != 3} p_i p3 / (1 - p_i), the law of successive draws
    want = p[3] + sum(p[i] * p[3] / (1 - p[i]) for i in range(4) if i != 3)
    assert abs(freq[3] - want) < 5 * np.sqrt(want * (1 - want) / 4000)
    # five of five: all of them, weight 0 included, in CSC order
    out, count = geo.weighted_sample_neighbors(row, colptr, T(weights, "float32"), T([0]), sample_size=5)
    assert out.numpy().tolist() == [0, 1, 2, 3, 4] and count.numpy().tolist() == [5]


def test_sampling_refusals():
    row, colptr, nodes = T(ROW), T(COLPTR), T(NODES)
    with pytest.raises(ValueError, match="eids must be given when return_eids is True"):
        geo.sample_neighbors(row, colptr, nodes, return_eids=True)
    with pytest.raises(ValueError, match="sample_size must be an int >= 0, or -1.*got -2"):
        geo.sample_neighbors(row, colptr, nodes, sample_size=-2)  # paddle 3.3.1 aborts the process
    with pytest.raises(ValueError, match=r"input_nodes must lie in \[0, 10\), got 10"):
        geo.sample_neighbors(row, colptr, T([10]))
    with pytest.raises(ValueError, match="colptr must have the dtype .*int64.*got int32"):
        geo.sample_neighbors(row, T(COLPTR, "int32"), nodes)
    with pytest.raises(ValueError, match=r"colptr must be non-decreasing, got colptr\[1\] = 5 > colptr\[2\] = 4"):
        geo.sample_neighbors(row, T([0, 5, 4, 13]), T([0]))
    with pytest.raises(ValueError, match="eids must have one entry per edge"):
        geo.sample_neighbors(row, colptr, nodes, eids=T([1, 2]), return_eids=True)
    with pytest.raises(ValueError, match="edge_weight must be >= 0"):
        geo.weighted_sample_neighbors(row, colptr, T(-np.ones(13), "float32"), nodes)
    with pytest.raises(ValueError, match=r"edge_weight must have shape \[13\]"):
        geo.weighted_sample_neighbors(row, colptr, T(np.ones(3), "float32"), nodes)
    with pytest.raises(TypeError, match="edge_weight must be a float tensor"):
        geo.weighted_sample_neighbors(row, colptr, T(np.ones(13)), nodes)


def test_incubate_aliases_warn_and_call_geometric():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pycoll.incubate.graph_reindex(T([0, 1, 2]), T([8, 9, 0, 4, 7, 6, 7]), T([2, 3, 2], "int32"))
        assert [t.numpy().tolist() for t in out] == [list(w) for w in REINDEX_CASES[0][3]]
        out = pycoll.incubate.graph_sample_neighbors(T(ROW), T(COLPTR), T(NODES), T(np.arange(13)), None, 5, True)
        assert out[1].numpy().tolist() == [2, 2, 2, 1] and out[2].numpy().tolist() == [0, 1, 11, 12, 2, 3, 4]
        with pytest.raises(ValueError, match="perm_buffer must be given when flag_perm_buffer is True"):
            pycoll.incubate.graph_sample_neighbors(T(ROW), T(COLPTR), T(NODES), flag_perm_buffer=True)
    assert sum("graph_reindex" in str(w.message) for w in caught) == 1
    assert sum("graph_sample_neighbors" in str(w.message) for w in caught) == 2


def test_graph_khop_sampler():
    row, colptr, nodes = T(ROW), T(COLPTR), T(NODES)
    # one hop taking every neighbor: paddle 3.3.1's output with sample_sizes [5]
    src, dst, index, reindexed = pycoll.incubate.graph_khop_sampler(row, colptr, nodes, [5])
    assert src.shape == [7, 1] and dst.shape == [7, 1]
    assert src.numpy().ravel().tolist() == [4, 5, 6, 5, 0, 6, 2]
    assert dst.numpy().ravel().tolist() == [0, 0, 1, 1, 2, 2, 3]
    assert index.numpy().tolist() == [0, 8, 1, 2, 3, 7, 9] and reindexed.numpy().tolist() == [0, 1, 2, 3]
    # a second hop from the new nodes 3, 7, 9 (paddle's kernel fails here): only 3 has a neighbor, 4,
    # which becomes node 7 of the subgraph, its edge pointing at 3's number, 4
    out = pycoll.incubate.graph_khop_sampler(row, colptr, nodes, [5, 5], sorted_eids=T(np.arange(13)),
                                             return_eids=True)
    assert out[0].numpy().ravel().tolist() == [4, 5, 6, 5, 0, 6, 2, 7]
    assert out[1].numpy().ravel().tolist() == [0, 0, 1, 1, 2, 2, 3, 4]
    assert out[2].numpy().tolist() == [0, 8, 1, 2, 3, 7, 9, 4] and out[3].numpy().tolist() == [0, 1, 2, 3]
    assert out[4].numpy().tolist() == [0, 1, 11, 12, 2, 3, 4, 5]
    # repeated inputs are sampled once; each is given its node's number
    src, dst, index, reindexed = pycoll.incubate.graph_khop_sampler(row, colptr, T([0, 0, 8, 1, 0]), [5])
    assert index.numpy().tolist()[:3] == [0, 8, 1] and reindexed.numpy().tolist() == [0, 0, 1, 2, 0]
    with pytest.raises(ValueError, match="none of the input nodes has a neighbor"):
        pycoll.incubate.graph_khop_sampler(row, colptr, T([7, 9]), [2])
    with pytest.raises(ValueError, match="sorted_eids must be given"):
        pycoll.incubate.graph_khop_sampler(row, colptr, nodes, [2], return_eids=True)
    with pytest.raises(TypeError, match="sample_sizes must be a non-empty list or tuple of ints"):
        pycoll.incubate.graph_khop_sampler(row, colptr, nodes, 2)


def test_reindex_through_a_table_equals_reindex_by_sorting(monkeypatch):
    # NumPy ids below a bound are numbered through a table (no sort); others by sorting: the same
    # numbers, with x holding a value twice (its last place) and neighbors repeating new ids
    from pycoll.geometric import reindex

    rng = np.random.default_rng(4)
    x = np.array([900_000, 17, 5_000, 17, 42], np.int64)
    neighbors = rng.choice(np.concatenate([x, rng.integers(0, 1_000_000, 6)]), 40)
    count = np.array([8, 8, 8, 8, 8], np.int32)
    table = reindex.reindex_graph(T(x), T(neighbors), T(count))
    monkeypatch.setattr(reindex, "_TABLE_IDS", 0)  # 1e6 ids > 8 * 45: the sorting path
    sorted_ = reindex.reindex_graph(T(x), T(neighbors), T(count))
    for a, b in zip(table, sorted_):
        assert a.numpy().tolist() == b.numpy().tolist()
    assert table[2].numpy().tolist()[:5] == x.tolist()
