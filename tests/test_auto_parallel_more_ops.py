"""The ops that need a whole dimension on distributed tensors in the eager loop (cumsum, sort,
topk, std, norms, logsumexp, prod, argmax, split, tile, expand, where, reshapes across the split;
casts, cummax/cummin, order statistics, nansum/nanmean, softmax along the split, the losses with
a whole label, the mean of uneven rows, a Linear with a split weight beside a split batch;
pycoll.distributed.auto_parallel's operand_rules and spmd_rules), on 2 ranks: every value against
NumPy on the whole array with paddle 3.3.1's placements, every gradient against the whole-array
computation's (tests/ranks/auto_parallel_more_ops.py); and the operand rules' answers on their own."""
from conftest import assert_ok, launch

from pycoll.distributed import Replicate, Shard
from pycoll.distributed.auto_parallel.operand_rules import needed


def test_ops_needing_a_whole_dimension_give_whole_values_placements_and_gradients():
    assert_ok(launch(2, "auto_parallel_more_ops.py", timeout=120), expect_lines=2)


def test_a_mean_over_an_uneven_split_makes_it_whole_and_an_even_one_stays():
    assert needed("mean", [(5, 6)], [Shard(0)], {"axes": (0,), "ranks": 2}) == [Replicate()]
    assert needed("mean", [(5, 6)], [Shard(0)], {"axes": None, "ranks": 2}) == [Replicate()]
    assert needed("mean", [(4, 6)], [Shard(0)], {"axes": (0,), "ranks": 2}) == [Shard(0)]
    assert needed("mean", [(5, 6)], [Shard(0)], {"axes": (1,), "ranks": 2}) == [Shard(0)]


def test_class_losses_cut_a_whole_label_as_their_scores_or_compute_whole():
    def rule(shapes, along, axis=-1, mean=True, counted=False):
        return needed("cross_entropy", shapes, along, {"axis": axis, "mean": mean, "counted": counted, "ranks": 2})
    assert rule([(4, 6), (4,)], [Shard(0), None]) == [Shard(0), Shard(0)]
    assert rule([(4, 6), (4, 1)], [Shard(0), Replicate()]) == [Shard(0), Shard(0)]
    assert rule([(4, 6), (4,)], [None, Shard(0)]) == [Shard(0), Shard(0)]  # whole scores cut as the label
    assert rule([(6, 4), (4,)], [Shard(1), None], axis=0) == [Shard(1), Shard(0)]  # classes first
    assert rule([(4, 6), (4,)], [Shard(1), None]) == [Replicate(), None]  # split classes
    assert rule([(4, 6), (4,)], [Shard(0), None], counted=True) == [Replicate(), None]
    assert rule([(4, 6), (4,)], [Shard(0), None], counted=True, mean=False) == [Shard(0), Shard(0)]
    assert rule([(5, 6), (5,)], [Shard(0), None]) == [Replicate(), None]  # uneven rows under a mean
    assert rule([(4, 6), (3,)], [Shard(0), None]) == [Replicate(), None]  # a wrong label: whole, the op says why


def test_linear_makes_a_split_weight_whole_beside_a_batch_split_only():
    shapes = [(4, 6), (6, 3), (3,)]
    assert needed("linear", shapes, [Shard(0), Shard(1), Shard(0)], {}) == [Shard(0), Replicate(), Replicate()]
    assert needed("linear", shapes, [Shard(0), Shard(1), None], {}) == [Shard(0), Replicate(), None]
    assert needed("linear", shapes, [None, Shard(1), Shard(0)], {}) == [None, Shard(1), Shard(0)]  # column-parallel
    assert needed("linear", shapes, [Shard(1), Shard(0), None], {}) == [Shard(1), Shard(0), None]  # row-parallel
