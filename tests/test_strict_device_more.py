"""tests/test_strict_device.py's CPU-against-"GPU" sweep over the modules added after it:
pycoll.distribution, pycoll.geometric, the incubate fused ops and LookAhead, the in-place logic and
distribution fills, the tensor-kind answers, the method aliases, the strided views, the typed
tensor factories, device_random and fleet's mix_precision_utils (one process, no fleet).

pycoll draws every random value on the host from its one NumPy generator and moves it to the
device, so the draws of both runs are equal by design and samples are compared value for value."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import pycoll
import pycoll.distribution as D
import pycoll.geometric as geo
import pycoll.nn as nn
import pycoll.optimizer as opt
from pycoll import incubate
from pycoll.distributed.fleet.utils import mix_precision_utils as mpu

import test_strict_device
from test_strict_device import _flat, _grads, _host, _x, same_on_both

cupy = test_strict_device.cupy  # its module fixture: the stand-in in CuPy's place for this module too


def _pos(*shape: int) -> pycoll.Tensor:
    """A positive float32 tensor (in [0.5, 2)) that takes a gradient."""
    return pycoll.to_tensor(np.random.uniform(0.5, 2.0, shape).astype(np.float32), stop_gradient=False)


def _unit(*shape: int) -> pycoll.Tensor:
    """A float32 tensor in (0.1, 0.9) that takes a gradient (probabilities)."""
    return pycoll.to_tensor(np.random.uniform(0.1, 0.9, shape).astype(np.float32), stop_gradient=False)


def _survey(d: D.Distribution, value: Any, params: list, reparameterized: bool = True) -> dict:
    """What ``d`` answers (every method its class has; the base class's NotImplementedError is the
    only refusal taken), with the gradients of log_prob + entropy (+ rsample) to its parameters."""
    out: dict = {"sample": d.sample([3])}
    for name in ("mean", "variance", "stddev", "entropy"):
        if not hasattr(type(d), name):
            continue
        try:
            got = getattr(d, name)
            out[name] = got() if callable(got) else got
        except (NotImplementedError, ValueError):  # the base's; Cauchy's "has no mean" as paddle's
            pass
    for name in ("log_prob", "prob", "probs", "cdf", "icdf", "pmf", "log_pmf"):
        if callable(getattr(d, name, None)):  # Bernoulli's probs is its parameter
            out[name] = getattr(d, name)(value)
    loss = out["log_prob"].sum() + (out["entropy"].sum() if "entropy" in out else 0.0)
    if reparameterized:
        out["rsample"] = d.rsample([2])
        loss = loss + out["rsample"].sum()
    loss.backward()
    out["grads"] = _grads(*params)
    return out


# ---- pycoll.distribution -------------------------------------------------------------------------
def case_distributions_continuous():
    loc, scale, rate = _x(3), _pos(3), _pos(3)
    a, b, df = _pos(3), _pos(3), _pos(3)
    low, high = _x(3), _x(3)
    high_ = low.detach() + high.detach().abs() + 0.5
    high_.stop_gradient = False
    v, vpos, vunit = _x(3), _pos(3), _unit(3)
    return {"normal": _survey(D.Normal(loc, scale), v, [loc, scale]),
            "uniform": _survey(D.Uniform(low, high_), (low + high_) / 2, [low, high_]),
            "laplace": _survey(D.Laplace(loc, scale), vunit, [loc, scale]),
            "cauchy": _survey(D.Cauchy(loc, scale), v, [loc, scale]),
            "gumbel": _survey(D.Gumbel(loc, scale), v, [loc, scale]),
            "studentt": _survey(D.StudentT(df + 2.0, loc, scale), v, [df, loc, scale]),
            "exponential": _survey(D.Exponential(rate), vpos, [rate]),
            "lognormal": _survey(D.LogNormal(loc, scale), vpos, [loc, scale]),
            "gamma": _survey(D.Gamma(a, b), vpos, [a, b]),
            "chi2": _survey(D.Chi2(df), vpos, [df]),
            "beta": _survey(D.Beta(a, b), vunit, [a, b], reparameterized=False),
            "cbernoulli": _survey(D.ContinuousBernoulli(_unit(3)), vunit, []),
            "normal_of_numbers": D.Normal(0.5, [1.0, 2.0]).sample([4]),
            "normal_of_host_arrays": D.Normal(np.array([0.0, 1.0]), np.array([1.0, 3.0])).log_prob(
                pycoll.to_tensor([0.5, 0.5], dtype="float64"))}


def case_distributions_discrete():
    p, lam, logits = _unit(3), _pos(3), _pos(2, 4)  # paddle reads log_prob's logits as weights
    return {"bernoulli": _survey(D.Bernoulli(p), pycoll.to_tensor([0.0, 1.0, 1.0]), [p], reparameterized=False),
            "bernoulli_rsample": D.Bernoulli(_unit(3)).rsample([2], temperature=0.5),
            "geometric": _survey(D.Geometric(_unit(3)), pycoll.to_tensor([1.0, 3.0, 2.0]), [], reparameterized=False),
            "poisson": _survey(D.Poisson(lam), pycoll.to_tensor([0.0, 2.0, 5.0]), [lam], reparameterized=False),
            "binomial": _survey(D.Binomial(pycoll.to_tensor([5, 8, 3]), p), pycoll.to_tensor([1.0, 4.0, 3.0]), [],
                                reparameterized=False),
            "binomial_int": D.Binomial(4, _unit(2)).sample([3]),
            "categorical": _survey(D.Categorical(logits), pycoll.to_tensor([0, 3]), [logits], reparameterized=False),
            "categorical_2d_value": D.Categorical(F_softmax(_x(4))).log_prob(pycoll.to_tensor([[0, 1], [3, 3]])),
            "multinomial": _survey(D.Multinomial(6, F_softmax(_x(2, 3))), pycoll.to_tensor([[1.0, 2.0, 3.0],
                                                                                          [6.0, 0.0, 0.0]]), [],
                                   reparameterized=False)}


def F_softmax(t: pycoll.Tensor) -> pycoll.Tensor:
    return pycoll.nn.functional.softmax(t, axis=-1)


def case_distributions_multivariate():
    conc = _pos(2, 3)
    loc, tri = _x(3), _x(3, 3)
    cov = tri @ tri.T + pycoll.eye(3)
    prec = pycoll.linalg.inv(cov)
    mvn = D.MultivariateNormal(loc, covariance_matrix=cov)
    ind = D.Independent(D.Normal(_x(2, 3), _pos(2, 3)), 1)
    return {"dirichlet": _survey(D.Dirichlet(conc), pycoll.to_tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]), [conc],
                                 reparameterized=False),
            "mvn": _survey(mvn, _x(2, 3), [loc, tri]),
            "mvn_precision": D.MultivariateNormal(loc.detach(), precision_matrix=prec.detach()).log_prob(_x(3)),
            "mvn_scale_tril": D.MultivariateNormal(loc.detach(), scale_tril=pycoll.linalg.cholesky(
                cov.detach())).sample([2]),
            "independent": _survey(ind, _x(2, 3), [])}


def case_kl_divergences():
    def pair(make, *shapes_pos):
        params = [_pos(*s) for s in shapes_pos]
        other = [_pos(*s) for s in shapes_pos]
        kl = D.kl_divergence(make(*params), make(*other))
        kl.sum().backward()
        return {"kl": kl, "grads": _grads(*params), "method": make(*params).kl_divergence(make(*other))}

    probs = lambda *s: F_softmax(_x(*s))  # noqa: E731
    locs = (lambda: _x(3))
    tri = _x(3, 3)
    cov = tri @ tri.T + pycoll.eye(3)
    return {"normal": pair(lambda s, t: D.Normal(s - 1.0, t), (3,), (3,)),
            "uniform": D.kl_divergence(D.Uniform(pycoll.zeros([2]), pycoll.ones([2]) * 2),
                                       D.Uniform(pycoll.zeros([2]) - 1, pycoll.ones([2]) * 3)),
            "laplace": pair(lambda s, t: D.Laplace(s, t), (3,), (3,)),
            "cauchy": pair(lambda s, t: D.Cauchy(s, t), (3,), (3,)),
            "exponential": pair(lambda r: D.Exponential(r), (3,)),
            "gamma": pair(lambda a, b: D.Gamma(a, b), (3,), (3,)),
            "beta": pair(lambda a, b: D.Beta(a, b), (3,), (3,)),
            "dirichlet": pair(lambda c: D.Dirichlet(c), (2, 3)),
            "lognormal": pair(lambda s, t: D.LogNormal(s, t), (3,), (3,)),
            "bernoulli": D.kl_divergence(D.Bernoulli(_unit(3)), D.Bernoulli(_unit(3))),
            "geometric": D.kl_divergence(D.Geometric(_unit(3)), D.Geometric(_unit(3))),
            "cbernoulli": D.kl_divergence(D.ContinuousBernoulli(_unit(3)), D.ContinuousBernoulli(_unit(3))),
            "poisson": D.kl_divergence(D.Poisson(_pos(3)), D.Poisson(_pos(3))),
            "binomial": D.kl_divergence(D.Binomial(pycoll.to_tensor([5, 8]), _unit(2)),
                                        D.Binomial(pycoll.to_tensor([5, 8]), _unit(2))),
            "categorical": D.kl_divergence(D.Categorical(probs(2, 4)), D.Categorical(probs(2, 4))),
            "mvn": D.kl_divergence(D.MultivariateNormal(locs(), covariance_matrix=cov),
                                   D.MultivariateNormal(locs(), covariance_matrix=cov * 2.0)),
            "independent": D.kl_divergence(D.Independent(D.Normal(_x(2, 3), _pos(2, 3)), 1),
                                           D.Independent(D.Normal(_x(2, 3), _pos(2, 3)), 1)),
            "chi2_gamma": D.kl_divergence(D.Chi2(_pos(3)), D.Gamma(_pos(3), _pos(3)))}


def case_exponential_family():
    """The Bregman KL fallback and ExponentialFamily.entropy (the log-normalizer's gradient taken
    by autograd), for the exponential families with batch-shaped natural parameters (paddle 3.3.1
    refuses both for Dirichlet), against the same on the CPU."""
    from pycoll.distribution.kl import _exponential_family
    families = {"gamma": lambda: D.Gamma(_pos(3), _pos(3)), "beta": lambda: D.Beta(_pos(3), _pos(3)),
                "exponential": lambda: D.Exponential(_pos(3)), "bernoulli": lambda: D.Bernoulli(_unit(3))}
    out = {}
    for name, make in families.items():
        p, q = make(), make()
        out[name] = {"bregman": _exponential_family(p, q), "entropy": D.ExponentialFamily.entropy(p)}
    return out


def case_distribution_arguments():
    """Parameters and values given as numbers, lists, host arrays and integer Tensors."""
    like = _pos(2)
    return {"int_tensor_param": D.Normal(pycoll.to_tensor([1, 2]), like).mean,
            "list_with_tensor": D.Normal([0.5, 1.0], like).log_prob([0.1, 0.2]),
            "host_value": D.Gamma(like, 2.0).log_prob(np.array([0.5, 1.5], np.float32)),
            "poisson_number": D.Poisson(2.0).log_prob(pycoll.to_tensor([1.0])),
            "mvn_number": D.MultivariateNormal(0.5, covariance_matrix=pycoll.to_tensor([[2.0]])).log_prob([0.0]),
            "categorical_list": D.Categorical(like).probs([0, 1]),
            "chain_call": (D.ExpTransform()(D.AffineTransform(pycoll.to_tensor([0.5]), pycoll.to_tensor([2.0]))))
            .forward(like)}


def case_transforms():
    x, y = _x(2, 3), _unit(2, 3)
    transforms = {"abs": D.AbsTransform(), "affine": D.AffineTransform(pycoll.to_tensor([0.5]), pycoll.to_tensor([2.0])),
                  "exp": D.ExpTransform(), "power": D.PowerTransform(pycoll.to_tensor([2.0])),
                  "sigmoid": D.SigmoidTransform(), "tanh": D.TanhTransform(),
                  "chain": D.ChainTransform([D.AffineTransform(pycoll.to_tensor([0.5]), pycoll.to_tensor([2.0])),
                                             D.TanhTransform()]),
                  "independent": D.IndependentTransform(D.ExpTransform(), 1),
                  "stack": D.StackTransform([D.ExpTransform(), D.TanhTransform()], 0)}
    out: dict = {}
    loss = 0.0
    for name, t in transforms.items():
        fwd = t.forward(x)
        inv = t.inverse(y)
        out[name] = {"forward": fwd, "inverse": inv}
        loss = loss + fwd.sum() + (inv[1] if name == "abs" else inv).sum()  # abs: (-y, y), as paddle's
        if name != "abs":
            out[name]["fldj"] = t.forward_log_det_jacobian(x)
            out[name]["ildj"] = t.inverse_log_det_jacobian(y)
            loss = loss + out[name]["fldj"].sum() + out[name]["ildj"].sum()
    soft, stick = D.SoftmaxTransform(), D.StickBreakingTransform()
    simplex = F_softmax(x)
    out["softmax"] = [soft.forward(x), soft.inverse(simplex)]
    out["stick"] = [stick.forward(x), stick.inverse(stick.forward(x)), stick.forward_log_det_jacobian(x)]
    out["reshape"] = [D.ReshapeTransform((2, 3), (3, 2)).forward(x), D.ReshapeTransform((2, 3), (3, 2)).inverse(
        x.reshape([3, 2])), D.ReshapeTransform((2, 3), (3, 2)).forward_log_det_jacobian(x)]
    loss = loss + out["stick"][2].sum() + out["softmax"][0].sum()
    loss.backward()
    out["grads"] = _grads(x, y)
    base = D.Normal(_x(3), _pos(3))
    td = D.TransformedDistribution(base, [D.AffineTransform(pycoll.to_tensor([0.5]), pycoll.to_tensor([2.0])),
                                          D.TanhTransform()])
    out["transformed"] = {"sample": td.sample([2]), "rsample": td.rsample([2]),
                          "log_prob": td.log_prob(_unit(3) - 0.5), "exp_of": D.ExpTransform()(base).log_prob(_pos(3))}
    return out


# ---- pycoll.geometric ------------------------------------------------------------------------------
def case_geometric():
    data = _x(5, 3)
    ids = pycoll.to_tensor([0, 0, 2, 2, 3], dtype="int32")
    segs = {op: getattr(geo, "segment_" + op)(data, ids) for op in ("sum", "mean", "max", "min")}
    x, e, y = _x(4, 3), _x(5), _x(4, 3)
    src, dst = pycoll.to_tensor([0, 1, 2, 0, 3]), pycoll.to_tensor([1, 2, 1, 0, 1])
    msgs = {f"u_recv_{op}": geo.send_u_recv(x, src, dst, reduce_op=op) for op in ("sum", "mean", "max", "min")}
    msgs["u_recv_out_size"] = geo.send_u_recv(x, src, dst, out_size=pycoll.to_tensor(6))
    for mop in ("add", "sub", "mul", "div"):
        msgs[f"ue_recv_{mop}"] = geo.send_ue_recv(x, e.abs() + 1.0, src, dst, message_op=mop, reduce_op="mean")
        msgs[f"uv_{mop}"] = geo.send_uv(x, y.abs() + 1.0, src, dst, message_op=mop)
    msgs["ue_recv_max"] = geo.send_ue_recv(x, _x(5, 3), src, dst, message_op="mul", reduce_op="max")
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(list(segs.values()) + list(msgs.values())))
    loss.backward()
    ints = geo.segment_max(pycoll.to_tensor([[1, 5], [3, 2], [7, 7]]), pycoll.to_tensor([0, 0, 1]))
    return {"segments": segs, "messages": msgs, "grads": _grads(data, x, e, y), "int_segment_max": ints,
            "incubate_segment_sum": incubate.segment_sum(data.detach(), ids)}


# ---- pycoll.incubate: fused ops, LookAhead ---------------------------------------------------------
def case_incubate_fused_ops():
    x, mask = _x(2, 2, 4, 4), pycoll.to_tensor(np.triu(np.full((2, 1, 4, 4), -1e4, np.float32), 1))
    y = _x(1, 2, 3, 3)
    outs = [incubate.softmax_mask_fuse(x, mask), incubate.softmax_mask_fuse_upper_triangle(y),
            incubate.identity_loss(x, "sum"), incubate.identity_loss(y, 1), incubate.identity_loss(x, "none")]
    sum((o * o).sum() for o in outs).backward()
    return {"outs": outs, "grads": _grads(x, y)}


def case_lookahead():
    def run(make_inner):
        model = nn.Linear(3, 2)
        la = incubate.LookAhead(make_inner(model.parameters()), alpha=0.3, k=2)
        data = _x(4, 3)
        for _ in range(5):
            (model(data) ** 2).mean().backward()
            la.step()
            la.clear_grad()
        loss = (model(data) ** 2).mean()
        loss.backward()
        la.minimize(loss)
        return {"params": model.parameters(), "slow": [pycoll.Tensor(s) for s in la._slow.values()]}
    return {"sgd": run(lambda ps: opt.SGD(0.1, parameters=ps)), "adam": run(lambda ps: opt.Adam(0.05, parameters=ps))}


# ---- in-place logic and fills, tensor kind, aliases, strided views, typed tensors, rng -----------------
def case_inplace_logic():
    x, y = _x(3, 4), _x(3, 4)
    ints = pycoll.to_tensor([[1, -2, 3], [4, 5, -6]], dtype="int32")
    out = {name: getattr(x.detach().clone(), name)(y) for name in
           ("equal_", "not_equal_", "less_than_", "less_", "less_equal_", "greater_than_", "greater_equal_")}
    for name in ("logical_and_", "logical_or_", "logical_xor_"):
        out[name] = getattr(pycoll, name)(x.detach() > 0, y > 0)
    out["logical_not_"] = pycoll.logical_not_(x.detach() > 0)
    out["scalar_compare"] = x.detach().clone().less_than_(pycoll.to_tensor(0.0))
    out["bitwise_invert_"] = ints.clone().bitwise_invert_()
    out["left_shift_"] = pycoll.bitwise_left_shift_(ints.clone(), pycoll.to_tensor([1, 2, 0], dtype="int32"))
    out["right_shift_"] = pycoll.bitwise_right_shift_(ints.clone(), pycoll.to_tensor(1, dtype="int32"), False)
    a, m1, m2 = _x(2, 2), _x(2, 3), _x(3, 2)
    acc = a * 1.0
    acc.addmm_(m1, m2, beta=0.5, alpha=2.0)
    z = y * 1.0
    z.masked_scatter_(x > 0, _x(12))
    (acc.sum() + (z * z).sum()).backward()
    out["addmm_"], out["masked_scatter_"], out["grads"] = acc, z, _grads(a, m1, m2, y)
    return out


def case_inplace_distributions():
    return {"cauchy": pycoll.zeros([3, 4]).cauchy_(1.0, 2.0), "geometric": pycoll.zeros([5]).geometric_(0.3),
            "geometric_tensor": pycoll.geometric_(pycoll.zeros([2, 3]), pycoll.to_tensor([0.2, 0.5, 0.9]))}


def case_tensor_kind():
    x = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    applied = x.apply(lambda t: t * 2)
    y = x.clone()
    y.apply_(lambda t: t.reshape([4, 3]) + 1)
    assert x.get_device() == (-1 if x.place == "cpu" else 0)  # paddle's: -1 for a host tensor
    return {"offset": [x.offset, x[1].offset, x[2, 1:].offset],
            "pinned": x.pin_memory().numpy(), "pinned_place": str(x.pin_memory().place), "dense": [x.is_dense(), x.is_sparse(),
                                                                                        x.dense_dim(), x.layout],
            "value": x.value(), "apply": applied, "apply_": y}


def case_method_aliases():
    x, c = _x(2, 3), _x(3, 2)
    outs = [x.reverse(1), pycoll.reverse(x, [0, 1]), pycoll.view_as_real(pycoll.view_as_complex(c)),
            c.as_complex().as_real(), pycoll.Tensor.concat([x, x], axis=0), pycoll.Tensor.stack([x, x]),
            x.matrix_transpose(),
            x.take_along_dim(pycoll.to_tensor([[0], [2]]), axis=1), pycoll.Tensor.block_diag([x, x]),
            pycoll.to_tensor([1, 2, 3]).combinations(2), (x > 0).argwhere()]
    sum((o * o).sum() for o in outs[:9]).backward()
    return {"outs": outs, "grads": _grads(x, c), "created": [list(pycoll.Tensor.create_tensor("float32").shape),
                                                              str(pycoll.Tensor.create_tensor("int64").dtype)]}


def case_strided_views():
    x = _x(12)
    views = [x.as_strided([3, 2], [4, 1], offset=8), pycoll.as_strided(x, [2, 2], [1, 1]),
             x.reshape([3, 4]).transpose([1, 0]).as_strided([2, 3], [3, 1])]  # the last: a copy's strides
    sum((v * (i + 1)).sum() for i, v in enumerate(views)).backward()
    with pycoll.no_grad():
        src = pycoll.to_tensor(np.arange(6, dtype=np.float32))
        target = pycoll.zeros([2])
        target.set_(src, [2, 2], [2, 1], 4)
        bare = pycoll.ones([3]).set_()
        grown = pycoll.to_tensor([1.0, 2.0, 3.0]).resize_([2, 3])
        cut = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]]).resize_([3])
        other = pycoll.to_tensor([[5, 6]], dtype="int64")
        rebuilt = pycoll.zeros([4])
        assert rebuilt.reconstruct_from_(other) is None  # paddle's
    source = _x(6)
    in_graph = pycoll.zeros([1]) * 1.0  # a non-leaf: set_ puts it in the graph, to source
    in_graph.set_(source, [3, 2])
    (in_graph * in_graph).sum().backward()
    return {"views": views, "grad": x.grad, "set_": target, "set_empty": list(bare.shape), "resize_": [grown, cut],
            "reconstruct": rebuilt, "shares": bool(rebuilt.array is other.array), "set_in_graph": in_graph,
            "set_grad": source.grad}


def case_typed_tensors():
    return {"float": pycoll.FloatTensor([1, 2]), "long": pycoll.LongTensor([[1, 2]]), "empty": list(pycoll.IntTensor().shape),
            "shaped": [list(pycoll.DoubleTensor(2, 3).shape), str(pycoll.HalfTensor(2).dtype)],
            "bool": pycoll.BoolTensor([1, 0]), "byte": pycoll.ByteTensor([3]),
            "from_array": pycoll.FloatTensor(np.arange(3.0))}


def case_device_random():
    device = pycoll.get_device()
    state = pycoll.device.get_rng_state(device)
    first = pycoll.rand([4])
    pycoll.device.set_rng_state(state, device)
    again = pycoll.rand([4])
    pycoll.device.manual_seed(5)
    seeded = pycoll.randn([3])
    assert np.array_equal(first.numpy(), again.numpy())
    gpu_state = pycoll.device.get_rng_state("gpu:0")  # one generator for every device, as pycoll draws on the host
    assert gpu_state == pycoll.device.get_rng_state()
    return {"first": first, "again": again, "seeded": seeded}


# ---- fleet's mix_precision_utils on one process ------------------------------------------------------
def case_mix_precision():
    inner = nn.Linear(3, 2).to(dtype="float16")
    model = mpu.MixPrecisionLayer(inner, dtype="float16")
    optimizer = mpu.MixPrecisionOptimizer(opt.Adam(0.01, parameters=inner.parameters(), multi_precision=True))
    data = _x(4, 3).astype("float16").detach()
    for _ in range(2):
        for _ in range(2):  # two backwards: the main grads sum them in float32
            (model(data).astype("float32") ** 2).mean().backward()
        main = [p.main_grad.clone() for p in inner.parameters()]
        optimizer.step()
        optimizer.clear_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the scaler is off on the CPU (it says so), and the wrapper deprecated
        scaler = pycoll.amp.GradScaler(init_loss_scaling=8.0)
        wrapped = mpu.MixPrecisionScaler(scaler)
        with pycoll.amp.auto_cast():  # a float16 auto_cast: the scaler scales after it (paddle's rule)
            loss = (model(data).astype("float32") ** 2).mean()
    wrapped.scale(loss).backward()
    wrapped.step(optimizer)
    wrapped.update()
    return {"params": inner.parameters(), "main": main, "after_scaled_step": [p.main_grad for p in inner.parameters()]}


# ---- tensors on a place that is not the current device --------------------------------------------------
def placed(make_tensor):
    """Results computed from tensors that ``make_tensor(host_array, grad=False)`` puts on one
    place, whatever the current device: every helper tensor an op makes must follow its inputs."""
    x4, xs = make_tensor(np.random.standard_normal((1, 2, 3, 3)).astype(np.float32), grad=True), \
        make_tensor(np.random.standard_normal((2, 3)).astype(np.float32), grad=True)
    rate, probs = make_tensor(np.array([1.5, 4.0], np.float32)), make_tensor(np.array([0.3, 0.6], np.float32))
    counts = make_tensor(np.array([5, 8], np.int64))
    stick = D.StickBreakingTransform()
    out = {"causal_softmax": incubate.softmax_mask_fuse_upper_triangle(x4),
           "stick": [stick.forward(xs), stick.inverse(stick.forward(xs)), stick.forward_log_det_jacobian(xs)],
           "poisson": [D.Poisson(rate).entropy(), D.kl_divergence(D.Poisson(rate), D.Poisson(rate * 2.0))],
           "binomial": [D.Binomial(counts, probs).entropy(),
                        D.kl_divergence(D.Binomial(counts, probs), D.Binomial(counts, probs * 0.5))],
           "multinomial": D.Multinomial(4, probs / probs.sum()).entropy(),
           "normal": D.Normal(probs, rate).sample([2]), "segment": geo.segment_max(xs, counts * 0),
           "geometric_": make_tensor(np.zeros(3, np.float32)).geometric_(0.4)}
    sum(o.sum() for o in (out["causal_softmax"], *out["stick"])).backward()
    out["grads"] = [x4.grad, xs.grad]
    with pycoll.no_grad():
        out["resize_"] = make_tensor(np.array([1.0, 2.0], np.float32)).resize_([2, 2])
        emptied = make_tensor(np.array([1.0, 2.0], np.float32)).set_()
        out["set_"] = [emptied, list(emptied.shape)]
    return out


@pytest.mark.parametrize("current,tensors", [("cpu", "gpu"), ("gpu", "cpu")])
def test_ops_follow_their_inputs_place_not_the_current_device(current, tensors):
    """GPU tensors while the current device is the CPU (and the reverse): helper tensors made on
    the current device met the inputs' arrays (CuPy's 'Unsupported type' TypeError) in the causal
    softmax's mask, StickBreakingTransform's offsets, the Poisson/Binomial/Multinomial entropy and
    KL supports and resize_'s new elements, and set_() moved x to the current device."""
    def run(place: str, current_device: str) -> dict:
        pycoll.set_device(current_device)
        pycoll.seed(11)
        np.random.seed(11)
        return _flat(placed(lambda a, grad=False: pycoll.to_tensor(a, place=place, stop_gradient=not grad)))

    want = run("cpu", "cpu")
    got = run(tensors, current)
    pycoll.set_device("gpu")
    for name, value in want.items():
        expected = _host(value, False, name)
        np.testing.assert_allclose(np.asarray(_host(got[name], tensors == "gpu", name)), np.asarray(expected),
                                   rtol=1e-6, atol=1e-7, err_msg=name)


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_equals_cpu_more(name):
    same_on_both(CASES[name])


def test_offset_of_a_device_view_counts_bytes_from_its_memory(cupy):
    """tensor_kind.offset on a CuPy view reads the MemoryPointer's allocation (``data.mem``)."""
    x = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(3, 4), place="gpu")
    assert isinstance(x.array, cupy.ndarray) and x[1, 2:].offset == 24 and x.offset == 0
