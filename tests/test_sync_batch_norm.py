"""SyncBatchNorm (pycoll.parallel.sync_batch_norm, reached as pycoll.nn.SyncBatchNorm).

The 2-rank test starts tests/ranks/sync_batch_norm.py, which checks the synchronised layer on
parts of a batch against the plain BatchNorm on the whole batch (see its docstring). In one
process, without an initialised environment, it is the plain BatchNorm.
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from conftest import assert_ok, launch


def test_sync_batch_norm_on_two_ranks_is_batch_norm_of_the_whole_batch():
    assert_ok(launch(2, "sync_batch_norm.py", timeout=60), expect_lines=2)


def test_without_an_environment_it_is_batch_norm():
    rng = np.random.default_rng(0)
    plain, sync = nn.BatchNorm2D(3), nn.SyncBatchNorm(3)
    state = {"weight": rng.standard_normal(3).astype(np.float32), "bias": rng.standard_normal(3).astype(np.float32)}
    for layer in (plain, sync):
        with pytest.warns(UserWarning, match="Skip loading for _(mean|variance)"):  # the running stats stay
            layer.set_state_dict(state)
    for step in range(3):
        if step == 2:
            plain.eval(), sync.eval()
        x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
        outs = []
        for layer in (plain, sync):
            t = pycoll.to_tensor(x, stop_gradient=False)
            out = layer(t)
            (out * out).sum().backward()
            outs.append((out.numpy(), t.grad.numpy(), layer.weight.grad.numpy().copy(), layer._mean.numpy().copy()))
            layer.clear_gradients()
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_convert_sync_batchnorm_keeps_the_tensors():
    model = nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm2D(4, weight_attr=False),
                          nn.Sequential(nn.BatchNorm1D(4, data_format="NLC", momentum=0.5)), nn.BatchNorm(4))
    model.eval()
    bn2, bn1 = model[1], model[2][0]
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model and type(model[0]) is nn.Conv2D and type(model[3]) is nn.BatchNorm  # legacy stays
    new2, new1 = model[1], model[2][0]
    assert isinstance(new2, nn.SyncBatchNorm) and isinstance(new1, nn.SyncBatchNorm) and not new1.training
    assert new1.weight is bn1.weight and new1.bias is bn1.bias and new1._mean is bn1._mean
    assert new1._variance is bn1._variance and new1._momentum == 0.5 and new1._data_format == "NLC"
    assert new2._mean is bn2._mean and new2.weight.stop_gradient  # paddle: a constant weight of ones
    np.testing.assert_array_equal(new2.weight.numpy(), 1)
    assert isinstance(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3D(2)), nn.SyncBatchNorm)
    with pytest.raises(TypeError, match="group"):
        nn.SyncBatchNorm(4, group=1)
    with pytest.raises(AttributeError, match="NoSuchLayer"):
        nn.NoSuchLayer
