"""print(layer) of the paddle.nn layers whose extra_repr follows paddle's. Every expected string
below is what paddle 3.3.1 (CPU) prints for the same construction."""
import pytest

from pycoll import nn

CASES = [
    (lambda: nn.GELU(), "GELU(approximate=False)"),
    (lambda: nn.GELU(True), "GELU(approximate=True)"),
    (lambda: nn.GELU("tanh"), "GELU(approximate=tanh)"),
    (lambda: nn.Softmax(), "Softmax(axis=-1)"),
    (lambda: nn.Softmax(1), "Softmax(axis=1)"),
    (lambda: nn.LogSoftmax(0), "LogSoftmax(axis=0)"),
    (lambda: nn.PReLU(), "PReLU(num_parameters=1, data_format=NCHW, init=0.25, dtype=float32)"),
    (lambda: nn.PReLU(4, 0.1, data_format="NHWC"),
     "PReLU(num_parameters=4, data_format=NHWC, init=0.1, dtype=float32)"),
    (lambda: nn.RReLU(0.1, 0.2), "RReLU(lower=0.1, upper=0.2, training=True, dtype=float32)"),
    (lambda: nn.Embedding(10, 4), "Embedding(10, 4, sparse=False, scale_grad_by_freq=False)"),
    (lambda: nn.Embedding(10, 4, padding_idx=0, sparse=True),
     "Embedding(10, 4, padding_idx=0, sparse=True, scale_grad_by_freq=False)"),
    (lambda: nn.Embedding(10, 4, padding_idx=3, scale_grad_by_freq=True),
     "Embedding(10, 4, padding_idx=3, sparse=False, scale_grad_by_freq=True)"),
    (lambda: nn.PairwiseDistance(), "PairwiseDistance(p=2.0)"),
    (lambda: nn.PairwiseDistance(p=1.0, epsilon=1e-3, keepdim=True),
     "PairwiseDistance(p=1.0, epsilon=0.001, keepdim=True)"),
    (lambda: nn.PixelShuffle(2), "PixelShuffle(upscale_factor=2)"),
    (lambda: nn.PixelShuffle(3, data_format="NHWC"), "PixelShuffle(upscale_factor=3, data_format=NHWC)"),
    (lambda: nn.PixelUnshuffle(2), "PixelUnshuffle(downscale_factor=2)"),
    (lambda: nn.PixelUnshuffle(3, data_format="NHWC"), "PixelUnshuffle(downscale_factor=3, data_format=NHWC)"),
    (lambda: nn.Upsample(scale_factor=2),
     "Upsample(scale_factor=2, mode=nearest, align_corners=False, align_mode=0, data_format=None)"),
    (lambda: nn.Upsample(size=[4, 5, 6], mode="trilinear", data_format="NDHWC"),
     "Upsample(size=[4, 5, 6], mode=trilinear, align_corners=False, align_mode=0, data_format=NDHWC)"),
    (lambda: nn.ZeroPad2D(1), "ZeroPad2D(padding=[1, 1, 1, 1], mode=constant, value=0.0, data_format=NCHW)"),
    (lambda: nn.ZeroPad2D([1, 2, 3, 4], data_format="NHWC"),
     "ZeroPad2D(padding=[1, 2, 3, 4], mode=constant, value=0.0, data_format=NHWC)"),
    (lambda: nn.Pad2D([1, 2, 3, 4], mode="replicate", data_format="NHWC", name="p"),
     "Pad2D(padding=[1, 2, 3, 4], mode=replicate, value=0.0, data_format=NHWC, name=p)"),
    (lambda: nn.ReflectionPad1D(1), "ReflectionPad1D(padding=[1, 1], mode=reflect, value=0.0, data_format=NCL)"),
    (lambda: nn.Unflatten(1, [2, 3], name="u"), "Unflatten(axis=1, shape=[2, 3], name=u)"),
    (lambda: nn.MultiHeadAttention(8, 2, dropout=0.1, kdim=4, vdim=6, need_weights=True),
     "MultiHeadAttention(\n"
     "  (q_proj): Linear(in_features=8, out_features=8, dtype=float32)\n"
     "  (k_proj): Linear(in_features=4, out_features=8, dtype=float32)\n"
     "  (v_proj): Linear(in_features=6, out_features=8, dtype=float32)\n"
     "  (out_proj): Linear(in_features=8, out_features=8, dtype=float32)\n"
     ")"),
    (lambda: nn.Sequential(nn.Conv2D(3, 8, 3), nn.BatchNorm2D(8), nn.ReLU(), nn.MaxPool2D(2), nn.Flatten(),
                           nn.Linear(8, 10), nn.Softmax(-1)),
     "Sequential(\n"
     "  (0): Conv2D(3, 8, kernel_size=[3, 3], data_format=NCHW)\n"
     "  (1): BatchNorm2D(num_features=8, momentum=0.9, epsilon=1e-05)\n"
     "  (2): ReLU()\n"
     "  (3): MaxPool2D(kernel_size=2, stride=None, padding=0)\n"
     "  (4): Flatten()\n"
     "  (5): Linear(in_features=8, out_features=10, dtype=float32)\n"
     "  (6): Softmax(axis=-1)\n"
     ")"),
]


@pytest.mark.parametrize("make, expected", CASES, ids=[f"{text.split('(')[0]}{i}" for i, (_, text) in enumerate(CASES)])
def test_layer_prints_as_paddle(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_rrelu_prints_its_mode():
    layer = nn.RReLU()
    layer.eval()
    assert repr(layer) == "RReLU(lower=0.125, upper=0.3333333333333333, training=False, dtype=float32)"


def test_transformer_layer_prints_attention_by_its_sublayers():
    text = repr(nn.TransformerEncoderLayer(8, 2, 16))
    assert text.startswith("TransformerEncoderLayer(\n  (self_attn): MultiHeadAttention(\n"
                           "    (q_proj): Linear(in_features=8, out_features=8, dtype=float32)\n")
    assert "  (dropout1): Dropout(p=0.1, axis=None, mode=upscale_in_train, inplace=False)\n" in text


def test_a_layers_name_prints_last_and_does_not_scope_its_parameters():
    # paddle 3.3.1: name= is printed (Dropout's before inplace; LayerNorm's and losses' not), and
    # the parameters keep the class's scope: Linear(2, 2, name="fc").weight.name == "linear_N.w_0"
    fc = nn.Linear(2, 2, name="fc")
    assert repr(fc).endswith(", dtype=float32, name=fc)") and fc.weight.name.startswith("linear_")
    assert repr(nn.ReLU(name="act")) == "ReLU(name=act)"
    assert repr(nn.Dropout(name="d")) == "Dropout(p=0.5, axis=None, mode=upscale_in_train, name=d, inplace=False)"
    assert repr(nn.AlphaDropout(name="d")) == "AlphaDropout(p=0.5, name=d)"
    norm = nn.LayerNorm(4, name="ln")
    assert repr(norm) == "LayerNorm(normalized_shape=[4], epsilon=1e-05)" and norm.weight.name.startswith("layer_norm_")
    assert nn.Embedding(4, 2, name="emb").weight.name.startswith("embedding_")
    assert repr(nn.L1Loss(name="loss")) == "L1Loss()"
