"""dist.ConvParallel on 2 ranks: where paddle's rules allow, a Conv2D's input reaches it split
along its width over "mp" (NCHW and NHWC); elsewhere as it was. Outputs and gradients equal a
plain model's with the same weights."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

dist.init_parallel_env()
rank = dist.get_rank()
mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])


class Net(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 4, kernel_size=3, **kw)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv1(x))


CASES = [  # (layer arguments, input shape, the input's local width on the conv, or None: not split)
    ({"padding": 1}, [2, 3, 5, 8], 4),
    ({"stride": [1, 3]}, [2, 3, 5, 6], 3),  # no padding: stride = kernel width
    ({"padding": 1, "data_format": "NHWC"}, [2, 5, 8, 3], 4),
    ({}, [2, 3, 5, 8], None),  # no padding, stride 1 != kernel 3
    ({"padding": 1, "stride": 2}, [2, 3, 5, 8], None),  # padded: stride must be 1
    ({"padding": 1, "dilation": 2}, [2, 3, 5, 8], None),
    ({"padding": 1}, [2, 3, 5, 7], None),  # width not divisible by the 2 ranks
]
for kw, shape, local_width in CASES:
    pycoll.seed(3)
    ref, model = Net(**kw), Net(**kw)
    model.set_state_dict(ref.state_dict())
    model, _ = dist.parallelize(model, None, mesh, {"mp_config": {"parallelize_plan": {"conv1": dist.ConvParallel()}}})
    seen = []
    model.conv1.register_forward_pre_hook(lambda layer, args: seen.append(args[0]))
    x = np.random.RandomState(0).randn(*shape).astype("float32")
    out, want = model(pycoll.to_tensor(x)), ref(pycoll.to_tensor(x))
    (out * out).mean().backward()
    (want * want).mean().backward()
    width_dim = 2 if kw.get("data_format") == "NHWC" else 3
    if local_width is None:
        assert not getattr(seen[0], "is_dist", lambda: False)(), (kw, seen[0])
    else:
        assert seen[0].placements == [dist.Shard(width_dim)] and seen[0]._array.shape[width_dim] == local_width, kw
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6, atol=1e-6, err_msg=str(kw))
    np.testing.assert_allclose(model.conv1.weight.grad.numpy(), ref.conv1.weight.grad.numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=str(kw))

try:
    dist.parallelize(nn.Sequential(nn.Linear(4, 4)), None, mesh,
                     {"mp_config": {"parallelize_plan": {"0": dist.ConvParallel()}}})
    raise AssertionError("ConvParallel on a Linear was not refused")
except ValueError as exc:
    assert "ConvParallel on a Linear" in str(exc), exc
print(f"OK rank={rank}", flush=True)
