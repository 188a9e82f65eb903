"""The zoo's later models (SqueezeNet, MobileNetV3, ShuffleNetV2, DenseNet, GoogLeNet, InceptionV3)
against numbers measured on paddle 3.3.1 (tests/data/paddle_vision_zoo.json): state_dict names,
shapes and order for every constructor, eval outputs (and train-mode outputs) of small
configurations loaded with the same weights, and a train-mode backward that reaches every
trainable parameter."""
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pycoll
from pycoll.vision import models as M
from test_vision import fill

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strict_cupy  # noqa: E402

PADDLE = json.loads((Path(__file__).parent / "data" / "paddle_vision_zoo.json").read_text())
DEFAULTS, CASES = PADDLE["defaults"], PADDLE["cases"]


def key_summary(model):
    keys = [(k, list(v.shape)) for k, v in model.state_dict().items()]
    return {"nkeys": len(keys), "nvalues": sum(int(np.prod(s)) for _, s in keys),
            "md5": hashlib.md5(json.dumps(keys).encode()).hexdigest(), "first": list(keys[0]),
            "last": list(keys[-1])}


def build(case):
    return getattr(M, case["builder"])(**case["kwargs"])


def outputs(y):
    return [t.numpy() for t in (y if isinstance(y, tuple) else (y,))]


def assert_matches(ys, expected):
    """Shapes, first six values and sum of each output, to float32 noise of its scale."""
    assert len(ys) == len(expected)
    for y, ref in zip(ys, expected):
        assert list(y.shape) == ref["shape"]
        scale = max(1.0, float(np.abs(y).max()))
        np.testing.assert_allclose(y.reshape(-1)[:6], ref["first"], rtol=0, atol=3e-5 * scale)
        assert abs(y.astype("float64").sum() - ref["sum"]) <= 3e-5 * max(1.0, np.abs(y).astype("float64").sum())


@pytest.mark.parametrize("builder", list(DEFAULTS))
def test_default_state_dict_is_paddles(builder):
    # names, shapes and order of every entry (paddle's own state_dict then loads key for key)
    assert key_summary(getattr(M, builder)()) == DEFAULTS[builder]


def test_classes_with_defaults_are_the_functions():
    assert key_summary(M.SqueezeNet("1.1")) == DEFAULTS["squeezenet1_1"]
    assert key_summary(M.MobileNetV3Large()) == DEFAULTS["mobilenet_v3_large"]
    assert key_summary(M.ShuffleNetV2()) == DEFAULTS["shufflenet_v2_x1_0"]
    assert key_summary(M.GoogLeNet()) == DEFAULTS["googlenet"]


@pytest.mark.parametrize("name", list(CASES))
def test_eval_output_is_paddles(name):
    case = CASES[name]
    model = build(case)
    fill(model)
    assert key_summary(model) == case["state_dict"]
    model.eval()
    x = np.random.default_rng(1).standard_normal(case["input"]).astype("float32")
    assert_matches(outputs(model(pycoll.to_tensor(x))), case["eval"])


def train_step(model, shape):
    """Train mode with dropout off (so the pass is deterministic): forward, then backward of
    sum(y_i * w_i) over the outputs, w_i drawn from default_rng(2 + i)."""
    model.train()
    for layer in model.sublayers():
        if isinstance(layer, pycoll.nn.Dropout):
            layer.eval()
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    ys = model(pycoll.to_tensor(x))
    ys = ys if isinstance(ys, tuple) else (ys,)
    loss = 0
    for i, y in enumerate(ys):
        loss = loss + (y * pycoll.to_tensor(np.random.default_rng(2 + i).standard_normal(y.shape).astype("float32"))).sum()
    loss.backward()
    return [y.numpy() for y in ys]


# cases whose backward is checked (inception_v3 with 2 images: with one, its 1 x 1 feature maps
# leave every train-mode batch norm a single value per channel, which passes no gradient back)
BACKWARD = {"squeezenet1_1": None, "mnv3_small": None, "shuffle_x0_25": None, "shuffle_swish": None, "densenet121": None,
            "googlenet": None, "inception_v3": [2, 3, 75, 75]}


@pytest.mark.parametrize("name", list(BACKWARD))
def test_train_backward_reaches_every_parameter(name):
    case = CASES[name]
    model = build(case)
    fill(model)
    ys = train_step(model, BACKWARD[name] or case["input"])
    if "train" in case:  # batch statistics: paddle's train-mode output
        assert_matches(ys, case["train"])
    trainable = [(k, p) for k, p in model.named_parameters() if not p.stop_gradient]
    assert len(trainable) == len([k for k, _ in model.named_parameters() if not k.endswith(("_mean", "_variance"))])
    for k, p in trainable:
        assert p.grad is not None, k
        g = p.grad.numpy()
        assert g.shape == tuple(p.shape) and np.isfinite(g).all() and np.any(g != 0), k


@pytest.mark.parametrize("make", [lambda: M.squeezenet1_0(pretrained=True), lambda: M.mobilenet_v3_small(pretrained=True),
                                  lambda: M.shufflenet_v2_swish(pretrained=True), lambda: M.densenet264(pretrained=True),
                                  lambda: M.googlenet(pretrained=True), lambda: M.inception_v3(pretrained=True)])
def test_pretrained_is_refused_without_downloading(make):
    with pytest.raises(ValueError, match="pretrained=True.*never"):
        make()


@pytest.mark.parametrize("make, message", [
    (lambda: M.SqueezeNet("1.2"), "version must be one of .*'1.2'"),
    (lambda: M.DenseNet(layers=100), "layers must be one of .*100"),
    (lambda: M.ShuffleNetV2(scale=0.7), "scale must be one of .*0.7"),
    (lambda: M.ShuffleNetV2(act="gelu"), "act must be 'relu', 'swish' or None, got 'gelu'"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_variants_have_paddles_shapes():
    # squeezenet without a classifier: the 512 pooled features; densenet161: growth 48, 96 stem channels
    y = M.squeezenet1_1(num_classes=0)(pycoll.rand([1, 3, 64, 64]))
    assert list(y.shape) == [1, 512]
    d161 = M.densenet161(num_classes=0)
    assert list(d161.conv1_func._conv.weight.shape) == [96, 3, 7, 7]
    assert list(d161.db_conv_2.conv2_1.bn_ac_func2._conv.weight.shape) == [48, 192, 3, 3]
    assert list(M.shufflenet_v2_x2_0(num_classes=0)._last_conv[0].weight.shape) == [2048, 976, 1, 1]


GPU_CASES = {"squeezenet": (lambda: M.squeezenet1_1(num_classes=10), [2, 3, 64, 64]),
             "mobilenet_v3": (lambda: M.mobilenet_v3_small(scale=0.5, num_classes=10), [2, 3, 64, 64]),
             "shufflenet_v2": (lambda: M.shufflenet_v2_x0_25(num_classes=10), [2, 3, 64, 64]),
             "densenet": (lambda: M.densenet121(num_classes=10), [2, 3, 32, 32]),
             "googlenet": (lambda: M.GoogLeNet(num_classes=0, with_pool=False), [1, 3, 64, 64])}
# (InceptionV3 is left out for time: its 22M parameters cost 3 s here; it adds no op the others lack
# but the non-exclusive average pool)


@pytest.mark.parametrize("name", list(GPU_CASES))
def test_same_numbers_on_gpu_arrays(name):
    """tests/strict_cupy.py in CuPy's place (it refuses host arrays meeting device arrays, as CuPy
    does): a train-mode forward and backward on the stand-in's GPU gives the CPU's outputs and
    gradients, held in device arrays."""
    make, shape = GPU_CASES[name]

    def compute():
        model = make()
        fill(model)
        model.train()
        for layer in model.sublayers():
            if isinstance(layer, pycoll.nn.Dropout):
                layer.eval()
        x = pycoll.to_tensor(np.random.default_rng(1).standard_normal(shape).astype("float32"))
        ys = model(x)
        ys = list(ys) if isinstance(ys, tuple) else [ys]
        sum(y.sum() for y in ys).backward()
        return ys + [p.grad for p in model.parameters() if not p.stop_gradient]

    with strict_cupy.installed():
        results = strict_cupy.on_each_place(compute)
    assert len(results["gpu"]) == len(results["cpu"])
    for want, got in zip(results["cpu"], results["gpu"]):
        assert isinstance(got.array, strict_cupy.ndarray)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_intermediate_layer_getter_returns_the_named_sublayers_outputs():
    # paddle's docstring example, at 64 x 64 (paddle 3.3.1: feat1 [1, 64, 16, 16], feat2 [1, 256, 4, 4])
    model = pycoll.vision.models.resnet18()
    getter = pycoll.vision.models._utils.IntermediateLayerGetter(model, {"layer1": "feat1", "layer3": "feat2"})
    out = getter(pycoll.rand([1, 3, 64, 64]))
    assert [(k, list(v.shape)) for k, v in out.items()] == [("feat1", [1, 64, 16, 16]), ("feat2", [1, 256, 4, 4])]
    assert "layer4" not in dict(getter.named_children())  # only the layers up to the last one asked for
    whole = pycoll.vision.models._utils.IntermediateLayerGetter(model, {"fc": "logits"})
    assert list(whole(pycoll.rand([2, 3, 64, 64]))["logits"].shape) == [2, 1000]  # flattened before fc
    with pytest.raises(ValueError, match=r"return_layers names \['layer9'\]"):
        pycoll.vision.models._utils.IntermediateLayerGetter(model, {"layer9": "x"})
