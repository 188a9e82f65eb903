"""SPInnerOverlapLinear and MPScale on 2 model-parallel ranks (fleet.init, mp_degree=2).

SPInnerOverlapLinear.apply(x, weight, bias, ...) must give the values and the x / weight / bias
gradients of ColumnSequenceParallelLinear's forward (AllGatherOp then linear, autograd's
backward) on the same inputs, with recompute_allgather False and True, with and without a bias;
and both against NumPy by hand on the whole sequence (rank r holds columns r*2:(r+1)*2 of the
weight, rows r*2:(r+1)*2 of the sequence). MPScale halves in forward and passes the gradient on."""
import numpy as np

import pycoll
from pycoll.distributed import fleet
from pycoll.distributed.fleet.utils import sequence_parallel_utils as spu

S, B, H, OUT = 4, 2, 3, 4
TOL = dict(rtol=1e-5, atol=1e-6)

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
fleet.init(is_collective=True, strategy=strategy)
group = fleet.get_hybrid_communicate_group().get_model_parallel_group()
rank = group.rank
init = np.random.RandomState(0)
X, W, BIAS, DY = (init.uniform(-1, 1, shape).astype("float32") for shape in ([S, B, H], [H, OUT], [OUT], [S, B, OUT]))
mine_rows, mine_cols = slice(rank * S // 2, (rank + 1) * S // 2), slice(rank * OUT // 2, (rank + 1) * OUT // 2)


def leaves(with_bias):
    ts = [pycoll.to_tensor(X[mine_rows]), pycoll.to_tensor(W[:, mine_cols]),
          pycoll.to_tensor(BIAS[mine_cols]) if with_bias else None]
    for t in ts:
        if t is not None:
            t.stop_gradient = False
    return ts


dy = pycoll.to_tensor(DY[:, :, mine_cols])
for with_bias in (True, False):
    x0, w0, b0 = leaves(with_bias)
    ref = pycoll.nn.functional.linear(spu.AllGatherOp.apply(x0, group), w0, b0)
    (ref * dy).sum().backward()
    for recompute_allgather in (False, True):
        x1, w1, b1 = leaves(with_bias)
        out = spu.SPInnerOverlapLinear.apply(x1, w1, b1, False, recompute_allgather, False, group)
        (out * dy).sum().backward()
        np.testing.assert_allclose(out.numpy(), ref.numpy(), **TOL)
        for got, want in [(x1, x0), (w1, w0)] + ([(b1, b0)] if with_bias else []):
            np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), **TOL)
        # by hand: out = X W[:, cols] + b; dX = sum over ranks of DY[:, :, cols] W[:, cols]^T, this rank's rows
        np.testing.assert_allclose(out.numpy(), X @ W[:, mine_cols] + (BIAS[mine_cols] if with_bias else 0), **TOL)
        np.testing.assert_allclose(x1.grad.numpy(), (DY @ W.T)[mine_rows], **TOL)
        np.testing.assert_allclose(w1.grad.numpy(), np.einsum("sbh,sbo->ho", X, DY[:, :, mine_cols]), **TOL)
        if with_bias:
            np.testing.assert_allclose(b1.grad.numpy(), DY[:, :, mine_cols].sum((0, 1)), **TOL)

try:
    spu.SPInnerOverlapLinear.apply(*leaves(True), False, False, True, group)
    raise AssertionError("took mp_fused_linear_param_grad_add=True")
except NotImplementedError as e:
    assert "mp_fused_linear_param_grad_add" in str(e), e

v = pycoll.to_tensor([2.0, -4.0])
v.stop_gradient = False
half = spu.MPScale.apply(v, 2)
(half * pycoll.to_tensor([3.0, 5.0])).sum().backward()
assert half.numpy().tolist() == [1.0, -2.0] and v.grad.numpy().tolist() == [3.0, 5.0]
print(f"OK rank={rank}")
