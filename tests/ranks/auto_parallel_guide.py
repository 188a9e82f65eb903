"""The auto-parallel guide's model through dist.to_static on 2 ranks: weights made by
create_parameter, cut by shard_tensor and used in matmul (not nn.Linear weights). DistModel runs
it under the eager SPMD rules (a probe: to_static refused it, 'pycoll gives a meaning to sharded
weights of nn.Linear only'). argv[1]: "mp" (mesh [0, 1], w0 Shard(1), w1 Shard(0), the batch whole)
or "dp_mp" (mesh [[0], [1]] of dims dp x mp: the batch split over dp, the weights cut along an mp
of one). The losses of train, eval and predict must equal the eager loop's and NumPy's on the
whole model."""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.io import DataLoader, Dataset

case = sys.argv[1]
rank = dist.get_rank()
mesh = (dist.ProcessMesh([0, 1], dim_names=["mp"]) if case == "mp"
        else dist.ProcessMesh([[0], [1]], dim_names=["dp", "mp"]))
rs = np.random.RandomState(0)
W0, W1 = (rs.standard_normal((8, 8)) * 0.3).astype("float32"), (rs.standard_normal((8, 4)) * 0.3).astype("float32")
X, Y = rs.standard_normal((16, 8)).astype("float32"), rs.standard_normal((16, 4)).astype("float32")
LR = 0.1


class Rows(Dataset):
    def __getitem__(self, i):
        return X[i], Y[i]

    def __len__(self):
        return len(X)


class Mlp(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        w0 = self.create_parameter(shape=[8, 8])
        w0.set_value(W0)
        w1 = self.create_parameter(shape=[8, 4])
        w1.set_value(W1)
        mp = mesh.dim_names.index("mp")
        self.w0 = dist.shard_tensor(w0, mesh, [dist.Shard(1) if i == mp else dist.Replicate() for i in range(mesh.ndim)])
        self.w1 = dist.shard_tensor(w1, mesh, [dist.Shard(0) if i == mp else dist.Replicate() for i in range(mesh.ndim)])

    def forward(self, x):
        return pycoll.matmul(pycoll.nn.functional.relu(pycoll.matmul(x, self.w0)), self.w1)


def loader():
    plain = DataLoader(Rows(), batch_size=4)
    return dist.shard_dataloader(plain, meshes=[mesh], shard_dims="dp" if case == "dp_mp" else None)


def reference():
    """SGD on the whole model with NumPy: the losses of the 4 steps."""
    w0, w1, losses = W0.astype(np.float64), W1.astype(np.float64), []
    for step in range(4):
        x, y = X[4 * step:4 * step + 4], Y[4 * step:4 * step + 4]
        h = x @ w0
        a = np.maximum(h, 0)
        out = a @ w1
        losses.append(((out - y) ** 2).mean())
        g = 2 * (out - y) / out.size
        g1, ga = a.T @ g, g @ w1.T
        g0 = x.T @ (ga * (h > 0))
        w0, w1 = w0 - LR * g0, w1 - LR * g1
    return losses


def eager():
    model = Mlp()
    opt = dist.shard_optimizer(pycoll.optimizer.SGD(LR, parameters=model.parameters()))
    losses = []
    for x, y in loader():
        loss = pycoll.nn.MSELoss()(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


model = Mlp()
dist_model = dist.to_static(model, loader(), pycoll.nn.MSELoss(), pycoll.optimizer.SGD(LR, parameters=model.parameters()))
trained = [float(dist_model(x, y)) for x, y in loader()]
want = reference()
np.testing.assert_allclose(trained, want, rtol=1e-5)
np.testing.assert_allclose(eager(), want, rtol=1e-5)
assert "matmul" in str(dist_model.dist_main_program()), dist_model.dist_main_program()
x, y = next(iter(loader()))
dist_model.eval()
evaluated = float(dist_model(x, y))
dist_model.predict()
out = dist_model(x)["out0"]  # this rank's rows as NumPy (the strategy's return_numpy), as paddle's
w0, w1 = model.w0.numpy(), model.w1.numpy()  # the whole trained weights
whole_out = np.maximum(X[:4] @ w0, 0) @ w1
rows = slice(0, 4) if case == "mp" else slice(2 * rank, 2 * rank + 2)
np.testing.assert_allclose(out, whole_out[rows], rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(evaluated, ((whole_out - Y[:4]) ** 2).mean(), rtol=1e-5)
print(f"OK rank={rank} case={case} losses={[round(v, 6) for v in trained]}", flush=True)
