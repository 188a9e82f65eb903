"""DataParallel(find_unused_parameters=True) on 2 ranks, in the forms a probe found broken: a
parameter used outside forward (in the loss), two forwards before one backward, a forward that
returns a dataclass, and an auxiliary output the loss leaves out. Each wrapped gradient must be
the average over the ranks of the same model's gradient unwrapped (before, a parameter counted
twice let its bucket go early and zeros overwrote other gradients, silently; the auxiliary output
raised an IndexError). Every rank prints "OK rank=".
"""
import copy
from dataclasses import dataclass

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

dist.init_parallel_env()
rank = dist.get_rank()


@dataclass
class Output:
    logits: pycoll.Tensor
    hidden: pycoll.Tensor


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.aux = nn.Linear(4, 4), nn.Linear(4, 2), nn.Linear(4, 3)
        self.scale = self.create_parameter([1], default_initializer=nn.initializer.Constant(1.5))

    def forward(self, x, form):
        h = self.a(x).tanh()
        if form == "dataclass":
            return Output(self.b(h), h)
        if form == "aux":
            return self.b(h), self.aux(h)
        return self.b(h)


def loss_of(model, x, form):
    net = model._layers if isinstance(model, pycoll.DataParallel) else model
    if form == "outside":  # the scale is used in the loss, outside forward
        return (model(x, form) * net.scale).square().mean()
    if form == "two_forwards":
        return model(x, form).square().mean() + model(x * 2.0, form).mean()
    if form == "dataclass":
        return model(x, form).logits.square().mean()
    if form == "aux":
        return model(x, form)[0].square().mean()  # the auxiliary head's output is left out
    raise ValueError(form)


pycoll.seed(3)
plain = Net()
for form in ("outside", "two_forwards", "dataclass", "aux"):
    wrapped = pycoll.DataParallel(copy.deepcopy(plain), find_unused_parameters=True, comm_buffer_size=0)
    reference = copy.deepcopy(plain)
    for step in range(2):
        x = pycoll.to_tensor(np.random.RandomState(10 * step + rank).standard_normal((3, 4)).astype("float32"))
        loss_of(wrapped, x, form).backward()
        loss_of(reference, x, form).backward()
        for (name, got), want in zip(wrapped._layers.named_parameters(), reference.parameters()):
            if want.grad is None:
                local = np.zeros(want.shape, np.float32)
            else:
                local = want.grad.numpy()
            average = local.copy()
            dist.all_reduce(average)
            average /= dist.get_world_size()
            if got.grad is None:
                assert not average.any(), (form, step, name)
            else:
                np.testing.assert_allclose(got.grad.numpy(), average, rtol=1e-5, atol=1e-7,
                                           err_msg=f"{form} step {step} {name}")
            want.clear_gradient(False)
            got.clear_gradient(False)
print(f"OK rank={rank}", flush=True)
