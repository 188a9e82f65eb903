"""Editing containers after they are built: the fine-tuning idioms (replace a head, drop a layer).

The expected names and shapes were checked on paddle 3.3.1 for the cases where paddle's answer is
well defined (default-numbered layers, non-negative indices); negative indices mean a position here,
as in Python lists (paddle's setattr would add a layer named "-1").
"""
from collections import OrderedDict

import pytest

import pycoll
import pycoll.nn as nn


def _mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 4))


def test_replacing_a_head_keeps_its_name_and_changes_the_output():
    model = _mlp()
    model[2] = nn.Linear(3, 5)
    assert list(model._sub_layers) == ["0", "1", "2"]
    assert model(pycoll.ones([1, 2])).shape == [1, 5]
    model[-1] = nn.Linear(3, 6)
    assert model(pycoll.ones([1, 2])).shape == [1, 6]
    assert len(model.parameters()) == 4


def test_deleting_keeps_the_other_names_and_append_and_insert_number_the_new_ones():
    model = _mlp()
    del model[1]
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    model.append(nn.Tanh())
    assert list(model._sub_layers) == ["0", "2", "3"]
    numbered = _mlp().insert(1, nn.Tanh())
    assert list(numbered.state_dict()) == ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert isinstance(numbered[1], nn.Tanh)
    extended = nn.Sequential(nn.Linear(2, 2)).extend([nn.ReLU(), nn.Linear(2, 1)])
    assert extended(pycoll.ones([3, 2])).shape == [3, 1]
    del extended[0:2]
    assert len(extended) == 1 and isinstance(extended[0], nn.Linear)


def test_an_ordered_dict_names_the_layers():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(model._sub_layers) == ["fc", "act"]
    model["act"] = nn.Sigmoid()
    assert isinstance(model[1], nn.Sigmoid)
    del model["fc"]
    assert list(model._sub_layers) == ["act"]


def test_layer_list_deletion_renumbers():
    layers = nn.LayerList([nn.Linear(1, 1) for _ in range(4)])
    third = layers[2]
    del layers[1]
    assert list(layers._sub_layers) == ["0", "1", "2"] and layers[1] is third
    del layers[0:2]
    assert len(layers) == 1


@pytest.mark.parametrize("edit, error, match", [
    (lambda m: m.__setitem__(5, nn.ReLU()), IndexError, "index 5 is out of range for 3"),
    (lambda m: m.__setitem__(0, "relu"), TypeError, "must be a Layer, got str"),
    (lambda m: m.__delitem__("head"), KeyError, "no layer named 'head'"),
    (lambda m: m.insert(9, nn.ReLU()), IndexError, "index 9 is out of range"),
    (lambda m: m.insert(0, 3), TypeError, "module must be a Layer, got int"),
])
def test_bad_edits_name_what_is_wrong(edit, error, match):
    model = _mlp()
    with pytest.raises(error, match=match):
        edit(model)
    assert len(model) == 3


def test_pairs_must_all_be_pairs():
    with pytest.raises(TypeError, match="argument 1 must be a .name, layer. pair"):
        nn.Sequential(("a", nn.ReLU()), nn.ReLU())


def test_layer_list_pops_adds_and_refuses_indices_out_of_range_as_paddles():
    first, second, third = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 3)
    layers = nn.LayerList([first, second])
    joined = layers + nn.LayerList([third])  # paddle 3.3.1: a new LayerList, the operands unchanged
    assert [*joined] == [first, second, third] and len(layers) == 2
    layers += [third]
    assert [*layers] == [first, second, third]
    assert layers.pop(0) is first and [*layers] == [second, third]
    assert [name for name, _ in layers.named_children()] == ["0", "1"]
    assert layers.pop() is third and len(layers) == 1
    with pytest.raises(IndexError, match=r"index 5 is out of range, should be an int in \[-1, 1\)"):
        layers[5]
    with pytest.raises(IndexError, match=r"insert: index must be an int in \[-1, 1\], got 100"):
        layers.insert(100, nn.ReLU())  # (Python's list would append)
    assert len(layers) == 1


def test_layer_dict_takes_another_layer_dict():
    conv, act = nn.Conv2D(1, 1, 1), nn.ReLU()
    other = nn.LayerDict({"conv": conv, "act": act})
    layers = nn.LayerDict({"fc": nn.Linear(2, 2)})
    layers.update(other)
    assert list(layers.keys()) == ["fc", "conv", "act"] and layers["conv"] is conv
    assert list(nn.LayerDict(other).keys()) == ["conv", "act"]


def test_a_sublayer_may_have_a_dotted_name_as_in_paddle():
    model = nn.Layer()
    model.add_sublayer("block.0", nn.Linear(2, 2))  # paddle 3.3.1 keys: block.0.weight, block.0.bias
    assert list(model.state_dict()) == ["block.0.weight", "block.0.bias"]
    ones = {key: pycoll.ones(value.shape) for key, value in model.state_dict().items()}
    assert model.set_state_dict(ones) == ([], [])
    assert model.state_dict()["block.0.bias"].numpy().tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        model.add_sublayer("", nn.ReLU())


def test_numpy_integers_index_the_containers_as_paddles():
    import numpy as np
    tanh = nn.Tanh()
    layers, seq = nn.LayerList([nn.ReLU(), tanh]), nn.Sequential(nn.ReLU(), tanh)
    at = np.argmax([0.1, 0.9])  # an np.int64
    assert layers[at] is tanh and seq[at] is tanh
    layers[at] = nn.Sigmoid()
    assert type(layers[1]) is nn.Sigmoid
    with pytest.raises(TypeError, match="LayerList: index must be an int, got float"):
        layers[1.0]
