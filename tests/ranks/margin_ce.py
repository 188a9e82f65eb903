"""F.margin_cross_entropy on 2 ranks with class blocks of different widths (4 and 8), paddle's
docstring example 2: the loss equals paddle's printed values (GPU build; its logits are rounded to
8 digits), and loss, softmax blocks and logits gradients equal the single-process function on the
concatenated logits. Also with group=False (each rank alone) and an explicit Group."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn.functional as F

dist.init_parallel_env()
rank = dist.get_rank()
BLOCK0 = np.array([[-0.59561850, 0.32797505, 0.80279214, 0.00144975],
                   [-0.16265212, 0.84155098, 0.62008629, 0.79126072]] * 2)
BLOCK1 = np.array([[-0.34913275, -0.35180883, -0.53976657, -0.75234331, 0.70534995, 0.87157838, 0.31064437, 0.19537700],
                   [-0.63941012, -0.05631600, -0.02561853, 0.09363013, 0.56571130, 0.13611246, 0.08849565,
                    0.39219619]] * 2)
LABEL = np.array([5, 4, 5, 4])
cols = slice(0, 4) if rank == 0 else slice(4, 12)
whole = np.concatenate([BLOCK0, BLOCK1], axis=1)

# paddle's docstring values (m1=1, m2=0.5, m3=0, s=64, reduction=None)
shard = pycoll.to_tensor(BLOCK0 if rank == 0 else BLOCK1, stop_gradient=False)
loss, probs = F.margin_cross_entropy(shard, pycoll.to_tensor(LABEL), return_softmax=True, reduction=None)
np.testing.assert_allclose(loss.numpy().ravel(), [104.27437027, 113.40243782, 104.27437027, 113.40243782], rtol=1e-7)

group = dist.new_group([0, 1])
for margins, reduction, g in [((1.0, 0.5, 0.0, 64.0), None, None), ((1.35, 0.25, 0.1, 8.0), "mean", group),
                              ((1.0, 0.0, 0.2, 4.0), "sum", None)]:
    shard = pycoll.to_tensor(whole[:, cols], stop_gradient=False)
    loss, probs = F.margin_cross_entropy(shard, pycoll.to_tensor(LABEL[:, None]), *margins, group=g,
                                         return_softmax=True, reduction=reduction)
    (loss * loss).sum().backward()
    ref_in = pycoll.to_tensor(whole, stop_gradient=False)
    ref, ref_probs = F.margin_cross_entropy(ref_in, pycoll.to_tensor(LABEL), *margins, group=False,
                                            return_softmax=True, reduction=reduction)
    (ref * ref).sum().backward()
    np.testing.assert_allclose(loss.numpy(), ref.numpy(), rtol=1e-12, err_msg=str(margins))
    np.testing.assert_allclose(probs.numpy(), ref_probs.numpy()[:, cols], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(shard.grad.numpy(), ref_in.grad.numpy()[:, cols], rtol=1e-9, atol=1e-12)

# group=False: each rank's block is a whole problem of its own
lab = np.array([1, 0, 3, 2])
alone = F.margin_cross_entropy(pycoll.to_tensor(whole[:, cols]), pycoll.to_tensor(lab), group=False)
z = whole[:, cols] * 64.0
z[np.arange(4), lab] = np.cos(np.arccos(whole[:, cols][np.arange(4), lab]) + 0.5) * 64.0
want = np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(4), lab])
np.testing.assert_allclose(float(alone), want, rtol=1e-12)
try:
    F.margin_cross_entropy(shard, pycoll.to_tensor(np.array([0, 1, 2, 12])))
    raise AssertionError("label 12 of 12 classes was not refused")
except ValueError as exc:
    assert "[0, 12)" in str(exc), exc
print(f"OK rank={rank}", flush=True)
