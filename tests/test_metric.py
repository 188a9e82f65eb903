"""pycoll.metric against paddle 3.3.1: every expected value below is what paddle.metric printed
for the same calls (CPU), said where."""
import numpy as np
import pytest

import pycoll
from pycoll.metric import Accuracy, Auc, Metric, Precision, Recall, accuracy

PRED = pycoll.to_tensor([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.6, 0.2, 0.2], [0.2, 0.7, 0.1]])
LABEL = pycoll.to_tensor([[1], [0], [2], [0]])


def test_accuracy_function_counts_labels_among_the_top_k():
    # paddle 3.3.1: 0.25 for k=1, 0.75 for k=2; correct/total receive 3 and 4
    acc = accuracy(PRED, LABEL)
    assert acc.shape == [] and acc.dtype == np.float32 and acc.item() == 0.25
    correct, total = pycoll.zeros([1], "int32"), pycoll.zeros([1], "int32")
    assert accuracy(PRED, LABEL, k=2, correct=correct, total=total).item() == 0.75
    assert (correct.item(), total.item()) == (3, 4) and correct.dtype == np.int32
    assert pycoll.metric.accuracy(PRED, pycoll.to_tensor([[1], [0], [2], [0]], dtype="int32")).item() == 0.25
    scores = pycoll.to_tensor([[0.2, 0.8], [0.9, 0.1], [0.6, 0.4]])
    assert accuracy(scores, pycoll.to_tensor([[1], [1], [1]])).item() == pytest.approx(1 / 3)  # paddle: 0.33333334
    with pytest.raises(ValueError, match="label must have 2 dimensions"):
        accuracy(PRED, pycoll.to_tensor([1, 0, 2, 0]))  # paddle: a ShapeError too


def test_accuracy_metric_top1_and_top2():
    m = Accuracy(topk=(1, 2))
    assert m.name() == ["acc_top1", "acc_top2"]
    marks = m.compute(PRED, LABEL)
    # paddle 3.3.1's marks: equal scores keep their order (row 1 ranks class 0 before class 1)
    assert marks.dtype == np.float32 and marks.numpy().tolist() == [[1, 0], [0, 1], [0, 0], [0, 1]]
    assert m.update(marks) == [0.25, 0.75] and m.accumulate() == [0.25, 0.75]
    # a 1-d label, then a one-hot label: paddle 3.3.1 gives [0.5, 0.75], then [0.75, 1.0] per batch
    assert m.update(m.compute(PRED, pycoll.to_tensor([1, 1, 1, 1]))) == [0.5, 0.75]
    assert m.accumulate() == [0.375, 0.75]
    one_hot = pycoll.nn.functional.one_hot(pycoll.to_tensor([2, 2, 0, 1]), 3)
    assert m.update(m.compute(PRED, one_hot)) == [0.75, 1.0]
    assert m.accumulate() == [0.5, pytest.approx(0.8333333333333334)]
    m.reset()
    assert m.accumulate() == [0.0, 0.0]
    single = Accuracy()
    assert single.name() == ["acc"] and single.update(single.compute(PRED, LABEL)) == 0.25
    assert single.accumulate() == 0.25
    # NumPy floats, as paddle's (a script may call .item() on them); an empty batch gives NaN
    assert isinstance(single.update(single.compute(PRED, LABEL)), np.float64)
    assert isinstance(single.accumulate(), np.float64)
    with pytest.warns(RuntimeWarning):
        empty = single.update(single.compute(PRED[:0], LABEL[:0]))
    assert np.isnan(empty) and single.accumulate() == 0.25
    assert Accuracy(topk=(2,), name="x").name() == ["x_top2"]
    assert Accuracy().update(np.array([[1.0], [0.0]])) == 0.5  # update takes arrays too


PREDS = np.array([0.1, 0.5, 0.7, 0.4, 0.9, 0.5, 0.51, 0.49])
LABELS = np.array([0, 1, 1, 0, 0, 1, 0, 1])


def test_precision_and_recall_round_as_paddle():
    # paddle 3.3.1: precision 0.6 (tp 3, fp 2: 0.5 counts as positive), recall 0.25 (tp 1, fn 3:
    # 0.5 counts as negative, NumPy's rint)
    p, r = Precision(), Recall()
    p.update(PREDS, LABELS)
    r.update(pycoll.to_tensor(PREDS), pycoll.to_tensor(LABELS))
    assert (p.accumulate(), p.tp, p.fp, p.name()) == (0.6, 3, 2, "precision")
    assert (r.accumulate(), r.tp, r.fn, r.name()) == (0.25, 1, 3, "recall")
    p.update(pycoll.to_tensor(PREDS.reshape(-1, 1)), pycoll.to_tensor(LABELS.reshape(-1, 1)))
    assert (p.accumulate(), p.tp, p.fp) == (0.6, 6, 4)  # paddle 3.3.1
    p.reset()
    r.reset()
    assert p.accumulate() == 0.0 and r.accumulate() == 0.0 and Precision("p").name() == "p"
    with pytest.raises(ValueError, match="The 'preds' must be a numpy ndarray or Tensor."):
        p.update([0.5], [1])
    with pytest.raises(ValueError, match="one value per sample"):
        p.update(np.ones((8, 2)), LABELS)


def _auc_data():
    rng = np.random.RandomState(0)
    pr = rng.rand(50)
    return np.stack([1 - pr, pr], 1), (rng.rand(50) < pr).astype("int64")


def test_auc_is_paddles_bucketed_estimate():
    preds, labels = _auc_data()
    auc = Auc()
    auc.update(preds, labels)
    assert auc.accumulate() == 0.830220713073005  # paddle 3.3.1, to the last bit
    auc.update(pycoll.to_tensor(preds[:20]), pycoll.to_tensor(labels[:20].reshape(-1, 1)))
    assert auc.accumulate() == 0.8199827734711456  # paddle 3.3.1, after the second batch
    f32 = Auc()
    f32.update(preds.astype("float32"), labels)
    assert f32.accumulate() == 0.830220713073005  # paddle 3.3.1
    coarse = Auc(num_thresholds=7)
    coarse.update(preds, labels)
    assert coarse.accumulate() == 0.8191850594227504  # paddle 3.3.1
    pr_curve = Auc(curve="PR", num_thresholds=10)
    pr_curve.update(preds, labels)
    assert pr_curve.accumulate() == 0.8370118845500848 and pr_curve.name() == "auc"  # paddle 3.3.1
    pr_curve.reset()
    assert pr_curve.accumulate() == 0.0
    one_class = Auc()
    one_class.update(np.array([[0.5, 0.5], [0.2, 0.8]]), np.array([1, 1]))
    assert one_class.accumulate() == 0.0  # paddle 3.3.1: no negatives, no area
    with pytest.raises(ValueError, match="probabilities in"):
        Auc().update(np.array([[0.0, 1.5]]), np.array([1]))


def test_the_metric_base_is_abstract_and_exported():
    with pytest.raises(TypeError):
        Metric()

    class Count(Metric):
        def reset(self):
            self.n = 0

        def update(self, x):
            self.n += x

        def accumulate(self):
            return self.n

        def name(self):
            return "count"

    c = Count()
    c.reset()
    c.update(3)
    assert c.accumulate() == 3 and c.compute(1, 2) == (1, 2)
    assert pycoll.metric.Accuracy is Accuracy and set(pycoll.metric.__all__) == {
        "Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"}
