"""pycoll.vision against paddle.vision 3.3.1: the model zoo (state_dict keys and shapes, eval
outputs, train-mode gradients), the transforms on NumPy images and the datasets on small files
written here. The paddle numbers were measured with the same procedure on paddle 3.3.1 (CPU)."""
import hashlib
import json

import numpy as np
import pytest

import pycoll
from pycoll.vision import models as M


def fill(model, seed=0):
    """Every state_dict entry, in order, from one seeded stream (variances kept positive): the
    procedure the paddle numbers below were measured with. Returns [(key, shape)]."""
    rng = np.random.default_rng(seed)
    sd = model.state_dict()
    new = {}
    for k, v in sd.items():
        a = rng.standard_normal(list(v.shape)).astype("float32") * 0.1
        new[k] = np.abs(a) + 0.5 if k.endswith("_variance") else a
    model.set_state_dict({k: pycoll.to_tensor(a) for k, a in new.items()})
    return [(k, list(v.shape)) for k, v in sd.items()]


# name: (builder, input shape, number of state_dict entries, of values, md5 of the [(key, shape)] list,
#        eval output shape, its float64 sum, its first six values) -- measured on paddle 3.3.1
MODELS = {
    "lenet": (lambda: M.LeNet(), [2, 1, 28, 28], 10, 61610, "7cc3c132f81115d4ac73011ae468b41e", [2, 10],
              -3.147931445389986, [0.41736704, 0.12769406, 0.45022929, -1.05672789, -0.27145261, -0.42804408]),
    "alexnet0": (lambda: M.AlexNet(num_classes=0), [2, 3, 64, 64], 10, 2469696, "707f355eaf334c9e5a62c6f9353efdc1",
                 [2, 256, 1, 1], 222054.59898281097, [314.921997, 445.577545, 450.875092, 269.174500, 82.694977,
                                                      623.240356]),
    "vgg11bn0": (lambda: M.vgg11(batch_norm=True, num_classes=0), [2, 3, 32, 32], 48, 9231488,
                 "da03bd178926fdeb92cde5c8361d9c00", [2, 512, 7, 7], 3238.8912824559957, [0.0] * 6),
    "resnet18": (lambda: M.resnet18(num_classes=10), [4, 3, 64, 64], 102, 11191242, "f5593b086c8a7982d1a480a57ba10004",
                 [4, 10], 4.347925916314125, [-0.30679226, -0.21952364, 0.17667964, 0.00092025, 0.20753652,
                                              0.56872046]),
    "resnet50": (lambda: M.resnet50(num_classes=5), [2, 3, 32, 32], 267, 23571397, "05c2c7c19827067603445ad7b0832cde",
                 [2, 5], 3.3478436544537544, [-0.13888222, 0.97167766, -0.07434671, 1.36707211, -0.45164153,
                                              -0.13870740]),
    "resnext50_32x4d_nopool": (lambda: M.resnext50_32x4d(num_classes=0, with_pool=False), [1, 3, 32, 32], 265,
                               23048128, "5f839657c0bb81d2792275912ea90210", [1, 2048, 1, 1], 234.77075490355492,
                               [0.25644094, 0.06256510, 0.00319396, 0.21570006, 0.47711673, 0.35920390]),
    "mobilenet_v1": (lambda: M.mobilenet_v1(scale=0.25, num_classes=7), [4, 3, 64, 64], 137, 220343,
                     "3e88a8fbd5c35e91755d9350fb043fb1", [4, 7], 2.075330383144319,
                     [-0.07895126, 0.01092777, 0.00204974, 0.02759130, 0.41301700, 0.08448850]),
    "mobilenet_v2": (lambda: M.mobilenet_v2(scale=0.5, num_classes=7), [2, 3, 32, 32], 262, 715191,
                     "fcc90587761c02a4c497429cda37fac8", [2, 7], 1.228212296962738,
                     [0.22146785, -0.12009284, 0.11924793, -0.56480134, -0.10555952, 0.75220650]),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_model_keys_and_eval_output_match_paddle(name):
    make, shape, nkeys, nvalues, md5, out_shape, out_sum, first = MODELS[name]
    pycoll.seed(0)
    model = make()
    keys = fill(model)
    assert len(keys) == nkeys and sum(int(np.prod(s)) for _, s in keys) == nvalues
    assert hashlib.md5(json.dumps(keys).encode()).hexdigest() == md5  # paddle's names, order and shapes
    model.eval()
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    y = model(pycoll.to_tensor(x)).numpy()
    assert list(y.shape) == out_shape
    np.testing.assert_allclose(y.reshape(-1)[:6], first, rtol=2e-5, atol=2e-5)
    assert abs(y.astype("float64").sum() - out_sum) <= 2e-5 * max(1.0, abs(out_sum))


# name: (train-mode output sum, first parameter's name, its gradient's sum and sum of magnitudes,
#        last parameter's name and gradient, sum of the BN running means after the step) -- paddle 3.3.1
TRAIN = {
    "lenet": (-3.147931445389986, "features.0.weight", -19.532843440771103, 152.8596486747265, "fc.2.bias",
              [1.16662085, -0.83330500, -0.74188745, -3.23361397, 2.25466537, 1.04496777, 0.21986592,
               0.16662085, 0.40803850, -1.44609690], 0.0),
    "resnet18": (2.508072145283222, "conv1.weight", -9.160312259744387, 1360.602778009823, "fc.bias",
                 [2.84954453, -0.51655424, 0.66702598, -2.10067916, 1.45447969, 2.11218691, 2.10680842,
                  -0.60336143, -2.45108891, -3.37278700], 9.240670977451373),
    "mobilenet_v1": (2.3067598827183247, "conv1.0.weight", -1.3700173050165176, 855.7331096082926, "fc.bias",
                     [1.60585320, -0.01016486, -0.01109374, -3.08184290, 2.39915967, 1.97977078, -1.91454709],
                     3.14753612158529),
}


@pytest.mark.parametrize("name", list(TRAIN))
def test_model_train_step_gradients_match_paddle(name):
    make, shape = MODELS[name][:2]
    out_sum, first_name, g_sum, g_abs, last_name, last_grad, mean_sum = TRAIN[name]
    model = make()
    fill(model)
    model.train()
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    y = model(pycoll.to_tensor(x))
    w = np.random.default_rng(2).standard_normal(list(y.shape)).astype("float32")
    (y * pycoll.to_tensor(w)).sum().backward()
    params = dict(model.named_parameters())
    first, last = list(params)[0], list(params)[-1]
    assert (first, last) == (first_name, last_name)
    grad = params[first].grad.numpy().astype("float64")
    assert abs(y.numpy().astype("float64").sum() - out_sum) <= 1e-5 * max(1.0, abs(out_sum))
    assert abs(np.abs(grad).sum() - g_abs) <= 1e-5 * g_abs
    assert abs(grad.sum() - g_sum) <= 2e-4 * g_abs  # a sum of signed terms: float32 noise of the total
    np.testing.assert_allclose(params[last].grad.numpy(), last_grad, rtol=1e-5, atol=1e-5)
    means = sum(v.numpy().astype("float64").sum() for k, v in model.state_dict().items() if k.endswith("_mean"))
    assert abs(means - mean_sum) <= 1e-5 * max(1.0, abs(mean_sum))


@pytest.mark.parametrize("make", [lambda: M.resnet18(pretrained=True), lambda: M.vgg16(pretrained=True),
                                  lambda: M.mobilenet_v2(pretrained=True), lambda: M.alexnet(pretrained=True)])
def test_pretrained_is_refused_without_downloading(make):
    with pytest.raises(ValueError, match="pretrained=True.*never"):
        make()


def test_model_variants_have_paddle_shapes():
    # resnet34: 3+4+6+3 basic blocks; wide_resnet50_2: bottleneck width 128 (conv2 of layer1 is 128 -> 128)
    assert len(M.resnet34(num_classes=0).layer3) == 6
    wide = M.wide_resnet50_2(num_classes=0)
    assert list(wide.layer1[0].conv2.weight.shape) == [128, 128, 3, 3]
    assert list(M.resnext50_32x4d(num_classes=0).layer1[0].conv2.weight.shape) == [128, 4, 3, 3]
    with pytest.raises(ValueError, match="depth"):
        M.ResNet(M.BasicBlock, depth=20)
    y = M.resnet18(num_classes=0, with_pool=False)(pycoll.rand([1, 3, 64, 64]))
    assert list(y.shape) == [1, 512, 2, 2]
    assert pycoll.vision.LeNet is M.LeNet
