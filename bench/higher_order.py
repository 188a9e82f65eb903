"""Higher-order gradients (``grad(..., create_graph=True)``): training steps of three programs that
need them, pycoll against Paddle 3.3.1 in the same run.

    python bench/higher_order.py --paddle-python /tmp/paddlevenv/bin/python [--runs 5] [--steps 20]

* pinn: Burgers' equation residual u_t + u u_x - 0.003 u_xx on 2000 points, a 2-50-50-50-1 tanh
  MLP (two create_graph grads, then backward and an Adam step), float32;
* wgan_gp: a critic step with gradient penalty, conv2d(1->16, 3x3, stride 2) + leaky_relu,
  conv2d(16->32, 3x3, stride 2) + leaky_relu, linear, on 64 images of 28x28, float32;
* maml: one differentiable inner SGD step of a 1-40-40-1 relu MLP on 10 sine points, then the
  query loss backward to the initial weights (25 tasks a step), float32.

The driver runs each program in a fresh process per framework, alternating which goes first, with
OMP_NUM_THREADS=1 (one BLAS thread each); a process builds the same weights from NumPy, runs
--steps steps after one warm-up step and reports ms per step and its last loss. Table: the median
over --runs (min-max) and pycoll / Paddle of the medians (below 1: pycoll is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

PROGRAMS = ("pinn", "wgan_gp", "maml")


def _weights(fw, rng, *shapes):
    return [fw.to_tensor((rng.randn(*s) * 0.3).astype("float32"), stop_gradient=False) for s in shapes]


def pinn(fw):
    F = fw.nn.functional
    rng = np.random.RandomState(0)
    ps = _weights(fw, rng, (2, 50), (50,), (50, 50), (50,), (50, 50), (50,), (50, 1), (1,))
    opt = fw.optimizer.Adam(learning_rate=1e-3, parameters=ps)
    pts = rng.uniform(-1, 1, (2000, 2)).astype("float32")

    def step():
        x = fw.to_tensor(pts[:, 0:1], stop_gradient=False)
        t = fw.to_tensor(pts[:, 1:2], stop_gradient=False)
        h = fw.concat([x, t], 1)
        for i in range(0, 6, 2):
            h = fw.tanh(F.linear(h, ps[i], ps[i + 1]))
        u = F.linear(h, ps[6], ps[7])
        u_x, u_t = fw.grad(u, [x, t], fw.ones_like(u), create_graph=True)
        (u_xx,) = fw.grad(u_x, x, fw.ones_like(u_x), create_graph=True)
        loss = ((u_t + u * u_x - 0.003 * u_xx) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def wgan_gp(fw):
    F = fw.nn.functional
    rng = np.random.RandomState(0)
    k1, c1, k2, c2, w, b = _weights(fw, rng, (16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (32 * 6 * 6, 1), (1,))
    opt = fw.optimizer.Adam(learning_rate=1e-4, parameters=[k1, c1, k2, c2, w, b])
    real = fw.to_tensor(rng.randn(64, 1, 28, 28).astype("float32"))
    fake = fw.to_tensor(rng.randn(64, 1, 28, 28).astype("float32"))
    alpha = fw.to_tensor(rng.rand(64, 1, 1, 1).astype("float32"))

    def critic(x):
        h = F.leaky_relu(F.conv2d(x, k1, c1, stride=2), 0.2)
        h = F.leaky_relu(F.conv2d(h, k2, c2, stride=2), 0.2)
        return F.linear(h.reshape([64, -1]), w, b)

    def step():
        mixed = alpha * real + (1 - alpha) * fake
        mixed.stop_gradient = False
        d = critic(mixed)
        (g,) = fw.grad(d, mixed, fw.ones_like(d), create_graph=True)
        gp = ((g.reshape([64, -1]).norm(2, axis=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def maml(fw):
    F = fw.nn.functional
    rng = np.random.RandomState(0)
    ps = _weights(fw, rng, (1, 40), (40,), (40, 40), (40,), (40, 1), (1,))
    opt = fw.optimizer.Adam(learning_rate=1e-3, parameters=ps)
    tasks = [(rng.uniform(0.1, 5), rng.uniform(0, np.pi)) for _ in range(25)]
    xs = [rng.uniform(-5, 5, (10, 1)).astype("float32") for _ in range(50)]

    def net(x, p):
        h = F.relu(F.linear(x, p[0], p[1]))
        return F.linear(F.relu(F.linear(h, p[2], p[3])), p[4], p[5])

    def step():
        total = 0
        for i, (amp, phase) in enumerate(tasks):
            xa, xb = xs[2 * i], xs[2 * i + 1]
            ya, yb = (fw.to_tensor((amp * np.sin(v + phase)).astype("float32")) for v in (xa, xb))
            grads = fw.grad(F.mse_loss(net(fw.to_tensor(xa), ps), ya), ps, create_graph=True)
            fast = [p - 0.01 * g for p, g in zip(ps, grads)]
            total = total + F.mse_loss(net(fw.to_tensor(xb), fast), yb)
        loss = total / len(tasks)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def worker(framework: str, program: str, steps: int) -> None:
    if framework == "paddle":
        import paddle as fw
    else:
        import pycoll as fw
    step = globals()[program](fw)
    step()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step()
    ms = (time.perf_counter() - start) / steps * 1e3
    print(json.dumps({"ms": ms, "loss": float(loss)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paddle-python", required=True, help="the python of a venv with paddlepaddle")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "PROGRAM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.steps)
        return
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "GLOG_minloglevel": "2"}
    pythons = {"pycoll": sys.executable, "paddle": args.paddle_python}
    print("| program | pycoll ms/step | Paddle 3.3.1 ms/step | pycoll / Paddle | last loss (pycoll, Paddle) |")
    print("|---|---:|---:|---:|---|")
    for program in args.programs.split(","):
        times = {"pycoll": [], "paddle": []}
        losses = {}
        for run in range(args.runs):
            order = ("pycoll", "paddle") if run % 2 == 0 else ("paddle", "pycoll")
            for fw in order:
                out = subprocess.run([pythons[fw], __file__, "--paddle-python", args.paddle_python, "--steps",
                                      str(args.steps), "--worker", fw, program], env=env, check=True,
                                     capture_output=True, text=True).stdout
                report = json.loads(out.strip().splitlines()[-1])
                times[fw].append(report["ms"])
                losses[fw] = report["loss"]
        med = {fw: statistics.median(v) for fw, v in times.items()}
        cells = [f"{med[fw]:.1f} ({min(times[fw]):.1f}-{max(times[fw]):.1f})" for fw in ("pycoll", "paddle")]
        print(f"| {program} | {cells[0]} | {cells[1]} | {med['pycoll'] / med['paddle']:.2f} | "
              f"{losses['pycoll']:.6g}, {losses['paddle']:.6g} |")


if __name__ == "__main__":
    main()
