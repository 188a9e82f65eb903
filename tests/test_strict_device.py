"""The tensor/nn side on "GPU" tensors without a GPU: tests/strict_cupy.py in CuPy's place.

Each case runs twice, from the same seed, once with the CPU as the current device and once with
the stand-in's GPU, and its results (outputs, gradients, parameters after optimizer steps) must be
equal: the stand-in computes with NumPy underneath, so any difference, and any refusal (a host
array meeting a device array, ``np.asarray`` of device data, a name CuPy lacks), is a GPU bug in
pycoll. Every GPU-side result Tensor must also hold a device array (not host memory)."""
from __future__ import annotations

import os
import pickle
import sys
import warnings
from typing import Any, Callable, Dict

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
import pycoll.optimizer as opt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strict_cupy  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cupy():
    with strict_cupy.installed() as module:
        yield module


def _flat(result: Any, prefix: str = "") -> Dict[str, Any]:
    """Name -> leaf value of a case's (nested dict/list of) results."""
    if isinstance(result, dict):
        items = result.items()
    elif isinstance(result, (list, tuple)):
        items = enumerate(result)
    else:
        return {prefix: result}
    out: Dict[str, Any] = {}
    for key, value in items:
        out.update(_flat(value, f"{prefix}/{key}"))
    return out


def _host(value: Any, on_gpu: bool, name: str) -> Any:
    if isinstance(value, pycoll.Tensor):
        expected = "gpu:0" if on_gpu else "cpu"
        assert value.place == expected, f"{name}: on {value.place}, expected {expected}"
        if on_gpu:
            assert isinstance(value.array, strict_cupy.ndarray), f"{name}: holds {type(value.array)}"
        return value.numpy()
    if isinstance(value, strict_cupy.ndarray):
        return value.get()
    return value


def same_on_both(case: Callable[[], Any], rtol: float = 1e-5, atol: float = 1e-6) -> Dict[str, Any]:
    """Run ``case`` on the CPU and on the GPU from the same seed; assert equal results."""
    results = {}
    for place in ("cpu", "gpu"):
        pycoll.set_device(place)
        pycoll.seed(2024)
        np.random.seed(2024)
        results[place] = _flat(case())
    pycoll.set_device("gpu")
    assert results["cpu"].keys() == results["gpu"].keys()
    for name, cpu_value in results["cpu"].items():
        want = _host(cpu_value, False, name)
        got = _host(results["gpu"][name], True, name)
        if want is None or got is None:
            assert want is got, name
        elif isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
            assert np.asarray(got).dtype == np.asarray(want).dtype, name
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        elif isinstance(want, (int, float, complex)):
            assert got == pytest.approx(want, rel=rtol, abs=atol), name
        else:
            assert got == want, name
    return results["gpu"]


def _x(*shape: int, scale: float = 1.0) -> pycoll.Tensor:
    """A float32 tensor on the current device that takes a gradient, from NumPy's seeded draws."""
    return pycoll.to_tensor(np.random.standard_normal(shape).astype(np.float32) * scale,
                            stop_gradient=False)


def _grads(*tensors: pycoll.Tensor) -> list:
    return [t.grad for t in tensors]


# ---- creation and moves -----------------------------------------------------------------------
def case_creation():
    host = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = pycoll.to_tensor(host)
    return {"to_tensor_list": pycoll.to_tensor([[1, 2], [3, 4]]), "to_tensor_array": t,
            "to_tensor_float": pycoll.to_tensor(2.5), "zeros": pycoll.zeros([2, 3]),
            "ones": pycoll.ones([2], dtype="int64"), "full": pycoll.full([2, 2], 7.0),
            "arange": pycoll.arange(0, 5, 2), "linspace": pycoll.linspace(0, 1, 5), "eye": pycoll.eye(3),
            "rand": pycoll.rand([3, 2]), "randn": pycoll.randn([4]), "randint": pycoll.randint(0, 9, [5]),
            "uniform": pycoll.uniform([3], min=-2.0, max=2.0), "normal": pycoll.normal(1.0, 2.0, [3]),
            "zeros_like": pycoll.zeros_like(t), "full_like": pycoll.full_like(t, 3),
            "empty_shape": list(pycoll.empty([2, 5]).shape), "assign": pycoll.assign(host),
            "tensor_ctor": pycoll.Tensor(host)}


def case_moves():
    t = pycoll.to_tensor(np.arange(4, dtype=np.float32), stop_gradient=False)
    on_cpu, back = t.cpu(), t.cpu().cuda()
    ((on_cpu * 2).sum() + 1).backward()
    (back * back).sum().backward()
    assert on_cpu.place == "cpu" and back.place == "gpu:0"
    moved = pycoll.to_tensor(np.ones(3, np.float32), place="gpu")
    return {"numpy": t.numpy(), "tolist": t.tolist(), "item": t[1].item(), "float": float(t.sum()),
            "grad": t.grad, "gpu_from_cpu": moved.numpy(), "place": str(moved.place)}


# ---- elementwise, reductions, indexing, shapes: forward and backward --------------------------
def case_elementwise():
    x, y = _x(3, 4), _x(3, 4)
    outs = [x + y, x - 2, 3 * x, x * y, x / (y.abs() + 1), x ** 2, 2.0 ** x, pycoll.exp(x), pycoll.log(y.abs() + 1),
            pycoll.sqrt(x.abs() + 1), pycoll.tanh(x), F.sigmoid(x), F.relu(x), F.gelu(x), F.silu(x),
            pycoll.clip(x, -0.5, 0.5), pycoll.where(x > 0, x, y), pycoll.maximum(x, y), pycoll.minimum(x, y),
            pycoll.pow(x.abs(), 1.5), F.softmax(x, axis=-1), F.log_softmax(x, axis=0), pycoll.erf(x),
            F.leaky_relu(x, 0.1), F.elu(x), F.softplus(x), x.floor(), pycoll.sign(x), -x, pycoll.square(x)]
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(outs))
    loss.backward()
    with np.errstate(divide="ignore"):
        inf = x / 0.0
    logic = [x > y, x == x, pycoll.logical_and(x > 0, y > 0), pycoll.isnan(x), pycoll.isfinite(inf),
             pycoll.equal_all(x, x), pycoll.allclose(x, x)]
    return {"outs": outs, "grads": _grads(x, y), "logic": logic}


def case_reductions():
    x = _x(3, 4, 5)
    outs = [x.sum(), x.sum(axis=1), x.mean(axis=[0, 2], keepdim=True), x.max(axis=-1), x.min(), x.prod(axis=0),
            x.std(), x.var(axis=1), pycoll.logsumexp(x, axis=1), pycoll.norm(x), pycoll.norm(x, p=1, axis=2),
            pycoll.cumsum(x, axis=1), pycoll.cumprod(x, dim=2), pycoll.amax(x, axis=0), pycoll.median(x, axis=1)]
    sum(o.sum() for o in outs).backward()
    ints = [x.argmax(axis=1), x.argmin(), pycoll.topk(x, 2, axis=-1), pycoll.sort(x, axis=1), pycoll.argsort(x),
            pycoll.any(x > 2), pycoll.all(x > -5), pycoll.count_nonzero(x > 0), pycoll.unique(pycoll.to_tensor([3, 1, 3, 2]))]
    return {"outs": outs, "grad": x.grad, "ints": ints}


def case_indexing():
    x = _x(4, 5)
    idx = pycoll.to_tensor([2, 0, 3])
    mask = x > 0
    outs = [x[1], x[:, 1:3], x[-1, ::2], x[idx], x[mask], x[None, 1:, 2], x[[0, 2]], x[idx, 1],
            pycoll.gather(x, idx), pycoll.index_select(x, idx, axis=1), pycoll.masked_select(x, mask),
            pycoll.take_along_axis(x, pycoll.to_tensor([[0], [1], [2], [3]]), axis=1), x[..., 0]]
    sum((o * o).sum() for o in outs).backward()
    y = pycoll.zeros([4, 5])
    y[0] = 1.0
    y[:, 1] = pycoll.to_tensor([1.0, 2.0, 3.0, 4.0])
    y[y > 2] = -1.0
    y[idx] = 5.0
    y[1:3, 2:4] = pycoll.ones([2, 2]) * 7
    z = pycoll.scatter(pycoll.zeros([4, 2]), pycoll.to_tensor([1, 3]), pycoll.ones([2, 2]))
    w = pycoll.scatter_nd_add(pycoll.zeros([4]), pycoll.to_tensor([[1], [1], [2]]), pycoll.ones([3]))
    nz = pycoll.nonzero(mask)
    return {"outs": outs, "grad": x.grad, "set": y, "scatter": z, "scatter_nd_add": w, "nonzero": nz,
            "put_along": pycoll.put_along_axis(pycoll.zeros([2, 3]), pycoll.to_tensor([[1], [2]]), 9.0, axis=1)}


def case_setitem_grad():
    x, v = _x(3, 4), _x(4)
    y = x * 1.0
    y[1] = v
    y[:, 0] = 0.0
    (y * y).sum().backward()
    return {"y": y, "grads": _grads(x, v)}


def case_linear_algebra_and_shapes():
    a, b, c = _x(2, 3, 4), _x(2, 4, 5), _x(4, 4)
    outs = [pycoll.matmul(a, b), a @ b, pycoll.bmm(a, b), pycoll.einsum("bij,bjk->bik", a, b),
            pycoll.matmul(a, b[0], transpose_x=False), pycoll.concat([a, a * 2], axis=1),
            pycoll.stack([c, c], axis=0), pycoll.split(a, [1, 3], axis=2)[1], pycoll.chunk(b, 5, axis=2)[4],
            a.reshape([6, 4]), a.transpose([2, 0, 1]), a.unsqueeze(0).squeeze(0), a.flatten(1), a.T,
            c.expand([3, 4, 4]), pycoll.tile(c, [2, 1]), pycoll.flip(a, [1]), pycoll.roll(a, 1, axis=2),
            F.pad(a, [1, 2], value=0.5, data_format="NCL"), pycoll.tril(c), pycoll.triu(c, 1),
            pycoll.diag(c), pycoll.trace(c), pycoll.linalg.inv(c @ c.T + pycoll.eye(4)),
            pycoll.linalg.det(c), pycoll.outer(c[0], c[1]), pycoll.dot(c[0], c[1]), pycoll.kron(c[:2, :2], c[:2, :2]),
            pycoll.cross(a[:, :, :3], b[:, :3, 0].unsqueeze(1).expand([2, 3, 3])), pycoll.broadcast_to(c[0], [3, 4])]
    sum((o * o).sum() for o in outs).backward()
    return {"outs": outs, "grads": _grads(a, b, c)}


# ---- nn layers and losses ----------------------------------------------------------------------
def _train(model: nn.Layer, inputs: list, loss_fn: Callable = lambda out: (out * out).mean()) -> dict:
    outs = model(*inputs)
    first = outs[0] if isinstance(outs, (tuple, list)) else outs
    loss = loss_fn(first)
    loss.backward()
    return {"out": outs, "loss": loss, "grads": {n: p.grad for n, p in model.named_parameters()},
            "input_grads": [t.grad for t in inputs if isinstance(t, pycoll.Tensor) and not t.stop_gradient]}


def case_linear_conv():
    return {"linear": _train(nn.Linear(5, 3), [_x(4, 5)]),
            "conv": _train(nn.Conv2D(2, 3, 3, padding=1, stride=2), [_x(2, 2, 6, 6)]),
            "conv1d": _train(nn.Conv1D(2, 2, 3, dilation=2), [_x(2, 2, 9)]),
            "conv_t": _train(nn.Conv2DTranspose(2, 2, 3, stride=2), [_x(1, 2, 4, 4)])}


def case_norms():
    bn = nn.BatchNorm2D(3)
    trained = _train(bn, [_x(4, 3, 2, 2)])
    bn.eval()
    return {"bn_train": trained, "bn_eval": bn(_x(2, 3, 2, 2)), "bn_stats": [bn._mean, bn._variance],
            "ln": _train(nn.LayerNorm(6), [_x(3, 6)]), "gn": _train(nn.GroupNorm(2, 4), [_x(2, 4, 3)]),
            "in": _train(nn.InstanceNorm2D(2), [_x(2, 2, 3, 3)])}


def case_embedding_pool_dropout():
    emb = nn.Embedding(10, 4, padding_idx=0)
    ids = pycoll.to_tensor([[1, 0, 3], [9, 3, 3]])
    x = _x(2, 3, 6, 6)
    drop = nn.Dropout(0.5)
    d = drop(pycoll.ones([200]))
    kept = d.numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0} and 0 < (kept == 0).sum() < 200
    drop.eval()
    return {"emb": _train(emb, [ids]), "maxpool": F.max_pool2d(x, 2), "avgpool": nn.AvgPool2D(3, stride=2, padding=1)(x),
            "adaptive": nn.AdaptiveAvgPool2D(2)(x), "maxpool_grad": _train(nn.Sequential(nn.MaxPool2D(2, 2)), [x]),
            "dropout_eval": drop(x), "upsample": F.interpolate(x, scale_factor=2, mode="bilinear"),
            "pixel_shuffle": nn.PixelShuffle(2)(_x(1, 4, 2, 2)), "one_hot": F.one_hot(ids, 10)}


def case_recurrent():
    return {"lstm": _train(nn.LSTM(3, 4, num_layers=2), [_x(2, 5, 3)]),
            "gru": _train(nn.GRU(3, 4, direction="bidirect"), [_x(2, 5, 3)]),
            "rnn": _train(nn.SimpleRNN(3, 2), [_x(2, 4, 3)])}


def case_attention():
    mha = nn.MultiHeadAttention(8, 2)
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    mask = pycoll.to_tensor(np.triu(np.full((4, 4), -1e9, np.float32), 1))
    return {"mha": _train(mha, [_x(2, 4, 8), _x(2, 4, 8), _x(2, 4, 8), mask]),
            "encoder": _train(enc, [_x(2, 4, 8)]),
            "sdpa": F.scaled_dot_product_attention(_x(1, 4, 2, 8), _x(1, 4, 2, 8), _x(1, 4, 2, 8), is_causal=True)}


def case_losses():
    logits, target = _x(6, 5), pycoll.to_tensor([0, 4, 2, 1, 1, 3])
    soft = F.softmax(_x(6, 5), axis=-1)
    p, q = F.sigmoid(_x(6)), pycoll.to_tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    a, b = _x(6), _x(6)
    losses = [F.cross_entropy(logits, target), F.cross_entropy(logits, target, ignore_index=1, reduction="sum"),
              F.cross_entropy(logits, soft, soft_label=True), F.cross_entropy(logits, target, label_smoothing=0.1),
              F.cross_entropy(logits, target, weight=pycoll.to_tensor([1.0, 2.0, 1.0, 0.5, 1.0])),
              nn.CrossEntropyLoss()(logits, target.unsqueeze(1)), F.mse_loss(a, b), nn.MSELoss(reduction="sum")(a, b),
              F.binary_cross_entropy(p, q), F.binary_cross_entropy_with_logits(a, q, pos_weight=pycoll.to_tensor([2.0])),
              F.nll_loss(F.log_softmax(logits, axis=1), target), F.l1_loss(a, b), F.smooth_l1_loss(a, b),
              F.kl_div(F.log_softmax(logits, axis=1), soft, reduction="batchmean"),
              F.margin_ranking_loss(a, b, pycoll.sign(q - 0.5))]
    sum(losses).backward()
    return {"losses": losses, "grads": _grads(logits, a, b)}


# ---- optimizers, schedulers, clipping, AMP ------------------------------------------------------
def _fit(make_opt: Callable[[list], Any], steps: int = 3) -> dict:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x, y = _x(5, 4), _x(5, 2)
    optimizer = make_opt(model.parameters())
    slots = optimizer.state_slots()  # what a checkpoint is read into before the first step
    assert all(v.place == "cpu" for k, v in slots.items() if optimizer.holds_one_value(k)), slots.keys()
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        if hasattr(optimizer, "_learning_rate") and hasattr(optimizer._learning_rate, "step"):
            optimizer._learning_rate.step()
    state = optimizer.state_dict()
    powers = [k for k in state if optimizer.holds_one_value(k)]  # beta powers: host tensors, as paddle's
    assert all(state[k].place == "cpu" for k in powers), powers
    return {"params": model.parameters(), "loss": loss, "powers": [float(state[k]) for k in powers],
            "state": [v for k, v in state.items() if isinstance(v, pycoll.Tensor) and k not in powers]}


def case_optimizers():
    clip = nn.ClipGradByGlobalNorm(0.1)
    return {"sgd": _fit(lambda ps: opt.SGD(0.1, parameters=ps, weight_decay=0.01)),
            "momentum": _fit(lambda ps: opt.Momentum(0.1, 0.9, parameters=ps, use_nesterov=True, grad_clip=clip)),
            "adam": _fit(lambda ps: opt.Adam(0.01, parameters=ps, weight_decay=0.1)),
            "adamw": _fit(lambda ps: opt.AdamW(opt.lr.StepDecay(0.01, 1, 0.5), parameters=ps, weight_decay=0.05,
                                               grad_clip=clip)),
            "adamw_cos": _fit(lambda ps: opt.AdamW(opt.lr.CosineAnnealingDecay(0.01, 4), parameters=ps,
                                                   grad_clip=nn.ClipGradByNorm(0.5))),
            "rmsprop": _fit(lambda ps: opt.RMSProp(0.01, parameters=ps, grad_clip=nn.ClipGradByValue(0.05))),
            "adagrad": _fit(lambda ps: opt.Adagrad(0.1, parameters=ps)),
            "lamb": _fit(lambda ps: opt.Lamb(0.01, parameters=ps))}


def case_clip_utils():
    model = nn.Linear(3, 3)
    (model(_x(2, 3)) ** 2).sum().backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    nn.utils.clip_grad_value_(model.parameters(), 0.01)
    vec = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vec * 2, model.parameters())
    return {"total": total, "grads": [p.grad for p in model.parameters()], "params": model.parameters()}


def test_grad_scaler_on_gpu_scales_unscales_and_skips_inf_steps():
    """GradScaler runs only on the GPU (on the CPU it is off, as paddle's): the scaled step equals
    the plain float32 step, and a step with an inf gradient is skipped with the scale halved."""
    def plain() -> list:
        model = nn.Linear(3, 2)
        sgd = opt.SGD(0.1, parameters=model.parameters())
        F.mse_loss(model(pycoll.ones([4, 3])), pycoll.zeros([4, 2])).backward()
        sgd.step()
        return [p.numpy() for p in model.parameters()]

    pycoll.set_device("cpu")
    pycoll.seed(7)
    want = plain()
    pycoll.set_device("gpu")
    pycoll.seed(7)
    model = nn.Linear(3, 2)
    sgd = opt.SGD(0.1, parameters=model.parameters())
    scaler = pycoll.amp.GradScaler(init_loss_scaling=1024.0, decr_every_n_nan_or_inf=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycoll computes auto_cast in float32 (it says so)
        with pycoll.amp.auto_cast():
            loss = F.mse_loss(model(pycoll.ones([4, 3])), pycoll.zeros([4, 2]))
    scaled = scaler.scale(loss)
    assert float(scaled) == pytest.approx(1024.0 * float(loss), rel=1e-6)
    scaled.backward()
    scaler.step(sgd)
    scaler.update()
    sgd.clear_grad()
    for p, w in zip(model.parameters(), want):
        assert isinstance(p.array, strict_cupy.ndarray)
        np.testing.assert_allclose(p.numpy(), w, rtol=1e-5, atol=1e-7)
    before = [p.numpy() for p in model.parameters()]
    scaler.scale((model(pycoll.ones([1, 3])) * float("inf")).sum()).backward()
    scaler.step(sgd)
    assert scaler._found_inf
    scaler.update()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)
    assert scaler._scale == 512.0


# ---- io: save/load, DataLoader ----------------------------------------------------------------
def test_save_load_of_gpu_tensors_and_state_dicts(tmp_path):
    pycoll.set_device("gpu")
    model = nn.Linear(3, 2)
    adam = opt.Adam(0.01, parameters=model.parameters())
    model(pycoll.ones([2, 3])).sum().backward()
    adam.step()
    path = str(tmp_path / "m.pdparams")
    pycoll.save(model.state_dict(), path)
    pycoll.save(adam.state_dict(), str(tmp_path / "m.pdopt"))
    pycoll.save({"t": pycoll.to_tensor([1.0, 2.0]), "nested": [pycoll.ones([2], dtype="int64")]},
                str(tmp_path / "tree.pd"))
    loaded = pycoll.load(path)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(loaded[key].numpy(), value.numpy())
    fresh = nn.Linear(3, 2)
    fresh.set_state_dict(loaded)
    assert all(isinstance(p.array, strict_cupy.ndarray) for p in fresh.parameters())
    np.testing.assert_array_equal(fresh.weight.numpy(), model.weight.numpy())
    adam2 = opt.Adam(0.01, parameters=model.parameters())
    adam2.set_state_dict(pycoll.load(str(tmp_path / "m.pdopt")))
    for key, value in adam.state_dict().items():
        if isinstance(value, pycoll.Tensor):
            on_host = adam2.holds_one_value(key)  # the beta powers live on the host, as paddle's
            assert isinstance(adam2.state_dict()[key].array, np.ndarray if on_host else strict_cupy.ndarray), key
            np.testing.assert_array_equal(adam2.state_dict()[key].numpy(), value.numpy())
    tree = pycoll.load(str(tmp_path / "tree.pd"))
    np.testing.assert_array_equal(tree["t"].numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(tree["nested"][0].numpy(), [1, 1])
    restored = pickle.loads(pickle.dumps(pycoll.to_tensor([3.0])))
    assert restored.place == "gpu:0" and restored.numpy().tolist() == [3.0]


def case_resampling_and_draws():
    """interpolate's taps forward, backward and twice; multinomial and Categorical's draws (the
    host generator's numbers, so the same on both devices)."""
    x = _x(2, 3, 9, 11)
    down = F.interpolate(x, size=[4, 17], mode="bilinear", align_corners=True)
    near = F.interpolate(x, scale_factor=2)
    (down.sum() + (near * near).sum()).backward()
    g, = pycoll.grad((F.interpolate(x, size=[5, 5]) ** 2).sum(), x, create_graph=True)
    weights = pycoll.to_tensor(np.random.rand(5, 7).astype(np.float32))
    return {"down": down, "near": near, "grad": x.grad, "g": g,
            "with": pycoll.multinomial(weights, 6, replacement=True), "without": pycoll.multinomial(weights, 4),
            "categorical": pycoll.distribution.Categorical(weights).sample([3])}


def case_dataloader():
    data = np.arange(24, dtype=np.float32).reshape(12, 2)
    labels = np.arange(12) % 3

    class Pairs(pycoll.io.Dataset):
        def __len__(self) -> int:
            return 12

        def __getitem__(self, i: int):
            return data[i], labels[i]

    loader = pycoll.io.DataLoader(Pairs(), batch_size=5, shuffle=False, drop_last=False)
    model = nn.Linear(2, 3)
    losses = []
    for xb, yb in loader:
        xb, yb = xb.cuda() if pycoll.get_device() != "cpu" else xb, yb.cuda() if pycoll.get_device() != "cpu" else yb
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        losses.append(loss)
    tensors = pycoll.io.DataLoader(pycoll.io.TensorDataset([pycoll.to_tensor(data), pycoll.to_tensor(labels)]),
                                   batch_size=4)
    return {"losses": losses, "grads": [p.grad for p in model.parameters()], "tensor_batches": list(tensors)}


def test_dataloader_stacks_gpu_samples_on_the_gpu(cupy):
    """A dataset of CuPy arrays (it raised 'cannot batch samples of type ndarray') or of GPU
    Tensors (stacked through host copies) gives GPU batches, stacked with CuPy."""
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)

    class OnGpu(pycoll.io.Dataset):
        def __init__(self, raw: bool):
            self.raw = raw

        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int):
            t = pycoll.to_tensor(rows[i], place="gpu")
            return (t.array if self.raw else t), i

    for raw in (True, False):
        batches = list(pycoll.io.DataLoader(OnGpu(raw), batch_size=3))
        assert [b[0].place for b in batches] == ["gpu:0", "gpu:0"]
        assert all(isinstance(b[0].array, cupy.ndarray) for b in batches)
        np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), rows)
        assert [b[1].numpy().tolist() for b in batches] == [[0, 1, 2], [3]]


def test_assign_of_a_cupy_array_copies_it_on_the_gpu(cupy):
    """pycoll.assign(cupy_array) raised CuPy's implicit-conversion TypeError (np.asarray)."""
    src = cupy.arange(3, dtype=cupy.float32)
    out = pycoll.assign(src)
    assert isinstance(out.array, cupy.ndarray) and out.array is not src
    src += 1
    assert out.numpy().tolist() == [0.0, 1.0, 2.0]


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_equals_cpu(name):
    same_on_both(CASES[name])


def test_stand_in_refuses_what_cupy_refuses(cupy):
    """The stand-in is strict where the sweep relies on it (CuPy 14's rules)."""
    a = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    for bad in (lambda: np.asarray(a), lambda: a + np.ones(3), lambda: np.ones(3) * a,
                lambda: cupy.concatenate([a, np.ones((1, 3), np.float32)]), lambda: cupy.maximum(a, [1, 2, 3]),
                lambda: np.ascontiguousarray(a), lambda: cupy.ascontiguousarray(np.ones(2))):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        a[0] = np.zeros(3)
    with pytest.raises(AttributeError):
        cupy.errstate  # NumPy's, not CuPy's
    assert not isinstance(a, np.ndarray) and isinstance(np.sum(a), cupy.ndarray)
    assert isinstance(a.sum(), cupy.ndarray) and a.sum().shape == ()
    a[np.array([1])] = np.full(3, 5.0)  # advanced-index writes copy host values, as CuPy's
    assert (a + np.float32(1)).get()[1].tolist() == [6.0, 6.0, 6.0]
