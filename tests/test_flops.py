"""pycoll.flops against paddle's documented example (the LeNet table in paddle.flops' docstring,
paddle 3.3.1: its own flops fails on NumPy 2, so the docstring's numbers are the reference) and
paddle's per-layer rules worked by hand; and the layer names paddle gives (measured on 3.3.1)."""
import pytest

import pycoll
import pycoll.nn as nn

LENET_TABLE = """\
+---------------+-----------------+-----------------+--------+--------+
|   Layer Name  |   Input Shape   |   Output Shape  | Params | Flops  |
+---------------+-----------------+-----------------+--------+--------+
|    conv2d_0   |  [1, 1, 28, 28] |  [1, 6, 28, 28] |   60   | 47040  |
|    re_lu_0    |  [1, 6, 28, 28] |  [1, 6, 28, 28] |   0    |   0    |
|  max_pool2d_0 |  [1, 6, 28, 28] |  [1, 6, 14, 14] |   0    |   0    |
|    conv2d_1   |  [1, 6, 14, 14] | [1, 16, 10, 10] |  2416  | 241600 |
|    re_lu_1    | [1, 16, 10, 10] | [1, 16, 10, 10] |   0    |   0    |
|  max_pool2d_1 | [1, 16, 10, 10] |  [1, 16, 5, 5]  |   0    |   0    |
|    linear_0   |     [1, 400]    |     [1, 120]    | 48120  | 48000  |
|    linear_1   |     [1, 120]    |     [1, 84]     | 10164  | 10080  |
|    linear_2   |     [1, 84]     |     [1, 10]     |  850   |  840   |
+---------------+-----------------+-----------------+--------+--------+
Total Flops: 347560     Total Params: 61610
"""


class LeNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))

    def forward(self, x):
        return self.fc(pycoll.flatten(self.features(x), 1))


def test_lenet_matches_paddles_documented_table(capsys):
    net = LeNet()
    names = [m.full_name() for m in net.sublayers() if not list(m.children())]
    net.train()
    before = set(net.state_dict())
    assert pycoll.flops(net, [1, 1, 28, 28], print_detail=True) == 347560
    printed = capsys.readouterr().out
    table = printed[printed.index("+"):]
    # the names depend on how many layers this process made before; compare them through `names`
    expected = LENET_TABLE
    for paddle_name, ours in zip(["conv2d_0", "re_lu_0", "max_pool2d_0", "conv2d_1", "re_lu_1",
                                  "max_pool2d_1", "linear_0", "linear_1", "linear_2"], names):
        expected = expected.replace(f" {paddle_name} ", f" {ours} ", 1)
    assert [line.split("|")[2:] for line in table.splitlines()] == \
        [line.split("|")[2:] for line in expected.splitlines()]
    assert "Cannot find suitable count function for <class 'pycoll.nn.pooling.MaxPool2D'>" in printed
    assert net.training and set(net.state_dict()) == before  # mode restored, no counters left behind
    assert not any("total_ops" in vars(m) or "total_ops" in m._buffers for m in net.sublayers())


def test_the_rules_of_each_counted_layer():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2D(8)
            self.up = nn.Conv2DTranspose(8, 4, 2, stride=2, groups=2)
            self.adaptive = nn.AdaptiveAvgPool2D(3)
            self.avg = nn.AvgPool2D(3)
            self.fc = nn.Linear(4, 5, bias_attr=False)
            self.leaky = nn.LeakyReLU()

        def forward(self, x):
            x = self.avg(self.adaptive(self.up(self.bn(self.conv(x)))))
            return self.leaky(self.fc(x.flatten(1)))

    # paddle's rules (hapi/dynamic_flops.py), by hand for an input [2, 3, 8, 8]:
    conv = 2 * 8 * 8 * 8 * (3 * 9 + 1)        # output elements x (in/groups x kernel + bias)
    bn = 2 * (2 * 8 * 8 * 8)                  # 2 x input elements
    up = 2 * 4 * 16 * 16 * (8 / 2 * 4 + 1)    # the transpose: same rule, in_channels 8, groups 2
    adaptive = 2 * 4 * 3 * 3 * ((16 // 3) ** 2 + 1)
    avg = 2 * 4 * 1 * 1                       # output elements
    fc = 4 * 2 * 5                            # in_features x output elements
    leaky = 2 * 5                             # input elements
    assert pycoll.flops(Net(), [2, 3, 8, 8]) == int(conv + bn + up + adaptive + avg + fc + leaky)


def test_custom_ops_add_to_total_ops_as_in_paddle(capsys):
    def count_leaky_relu(m, x, y):
        m.total_ops += int(x[0].numel())

    net = nn.Sequential(nn.Linear(4, 3), nn.LeakyReLU(), nn.Tanh())
    assert pycoll.flops(net, [2, 4], custom_ops={nn.LeakyReLU: count_leaky_relu, nn.Tanh: count_leaky_relu}) \
        == 4 * 2 * 3 + 6 + 6
    assert "Customize Function has been applied to <class 'pycoll.nn.activation.Tanh'>" in capsys.readouterr().out


def test_a_leaf_network_is_counted():
    assert pycoll.flops(nn.Linear(4, 2), [3, 4]) == 4 * 3 * 2  # paddle answers 0 here


@pytest.mark.parametrize("args, error, match", [
    ((lambda x: x, [1, 4]), TypeError, "net must be a pycoll.nn.Layer, got function"),
    ((nn.Linear(4, 2), [1, 0]), ValueError, "input_size must be a list of positive ints"),
    ((nn.Linear(4, 2), [1, 4], {"Linear": print}), TypeError, "custom_ops must map Layer classes"),
])
def test_bad_arguments_name_themselves(args, error, match):
    with pytest.raises(error, match=match):
        pycoll.flops(*args)


def test_layer_names_follow_paddles_snake_case():
    # measured on paddle 3.3.1: full_name() prefixes and parameter names
    cases = [(nn.ReLU(), "re_lu"), (nn.MaxPool2D(2), "max_pool2d"), (nn.BatchNorm2D(3), "batch_norm2d"),
             (nn.Conv2DTranspose(2, 2, 2), "conv2d_transpose"), (nn.LSTM(2, 2), "lstm"), (nn.PReLU(), "p_re_lu"),
             (nn.SyncBatchNorm(2), "sync_batch_norm"), (nn.BCEWithLogitsLoss(), "bce_with_logits_loss")]
    for layer, prefix in cases:
        assert layer.full_name().rsplit("_", 1)[0] == prefix
    bn = nn.BatchNorm2D(3)
    assert bn.weight.name == f"{bn.full_name()}.w_0"
