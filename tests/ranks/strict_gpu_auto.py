"""The auto-parallel part of strict_gpu_training.py (2 ranks, GPU tensors on the strict CuPy
stand-in): shard_tensor of host data and of GPU tensors, a matmul of a row-split input by a
replicated weight, a sum and backward, the gradients laid out as their tensors; every reshard
between Shard(0), Shard(1), Replicate and Partial, forward and backward; and a matmul whose
contraction is split (a Partial result) made whole by reshard. All against the same computation
on whole CPU tensors."""
import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Partial, ProcessMesh, Replicate, Shard
from strict_gpu_device import held_on_device, same

S0, S1, R, P = Shard(0), Shard(1), Replicate(), Partial()


def cpu_leaf(a):
    return pycoll.to_tensor(a, place="cpu", stop_gradient=False)


def piece(a, placement, rank, n):
    return np.split(a, n, axis=placement.get_dim())[rank] if placement.is_shard() else a


def matmul_sum_backward(mesh, rank, n):
    data = np.random.default_rng(12)
    x, w = data.standard_normal((4, 6)).astype("float32"), data.standard_normal((6, 4)).astype("float32")
    dx = dist.shard_tensor(x, mesh, [S0], stop_gradient=False)  # host data placed on the GPU
    dw = dist.shard_tensor(pycoll.to_tensor(w), mesh, [R], stop_gradient=False)  # a GPU tensor
    held_on_device(dx._local_value(), "shard_tensor of host data")
    y = pycoll.matmul(dx, dw)
    loss = (pycoll.tanh(y) * 2).sum()
    loss.backward()
    cx, cw = cpu_leaf(x), cpu_leaf(w)
    ref = (pycoll.tanh(pycoll.matmul(cx, cw)) * 2).sum()
    ref.backward()
    same(dist.unshard_dtensor(loss) if loss.is_dist() else loss, ref, "auto-parallel loss")
    same(dist.unshard_dtensor(y), pycoll.matmul(cx, cw).detach(), "auto-parallel matmul")
    assert dx.grad.placements == [S0] and dw.grad.placements == [R], (dx.grad.placements, dw.grad.placements)
    same(dx.grad._local_value(), piece(cx.grad.numpy(), S0, rank, n), "auto-parallel x gradient")
    same(dw.grad._local_value(), cw.grad, "auto-parallel w gradient")
    # the contraction split: a Partial result, made whole by reshard
    a = dist.shard_tensor(pycoll.to_tensor(x), mesh, [S1], stop_gradient=False)
    b = dist.shard_tensor(pycoll.to_tensor(w), mesh, [S0], stop_gradient=False)
    partial = pycoll.matmul(a, b)
    assert partial.placements == [P], partial.placements
    whole = dist.reshard(partial, mesh, [R])
    same(whole._local_value(), pycoll.matmul(cx, cw).detach(), "Partial matmul resharded")
    whole.sum().backward()
    same(a.grad._local_value(), piece(np.ones((4, 4), "float32") @ w.T, S1, rank, n), "Partial matmul: a gradient")


def reshards(mesh, rank, n):
    whole = np.arange(4 * 6, dtype="float32").reshape(4, 6) / 7
    weight = np.random.default_rng(13).standard_normal((4, 6)).astype("float32")
    for src, dst in ((S0, R), (S1, R), (R, S0), (R, S1), (S0, S1), (S1, S0), (P, R), (P, S0), (R, P)):
        x = dist.shard_tensor(whole, mesh, [src], stop_gradient=False)
        y = dist.reshard(x, mesh, [dst])
        if dst.is_partial():
            got = y._local_value().detach().clone()
            dist.all_reduce(got)
            same(got, whole, f"reshard {src} -> {dst}: the pieces' sum")
        else:
            same(y._local_value(), piece(whole, dst, rank, n), f"reshard {src} -> {dst}")
        dist.local_map(lambda t: (t * pycoll.to_tensor(piece(weight, dst, rank, n))).sum(), out_placements=[None])(y).backward()
        grad_layout = R if src.is_partial() else src
        assert x.grad.placements == [grad_layout], (src, dst, x.grad.placements)
        same(x.grad._local_value(), piece(weight, grad_layout, rank, n), f"reshard {src} -> {dst} gradient")


def run(rank, n):
    mesh = ProcessMesh(list(range(n)), dim_names=["x"])
    matmul_sum_backward(mesh, rank, n)
    reshards(mesh, rank, n)
    return "auto(shard_tensor,matmul,sum,backward,reshard)"
