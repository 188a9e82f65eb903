"""Layer traversal with shared layers and tensors: named_sublayers / named_parameters /
named_buffers and their remove_duplicate argument. The expected lists were measured on Paddle
3.3.1 (CPU) with the same model."""
import inspect

import numpy as np

import pytest

import pycoll


def _model():
    """outer = Sequential(net, inner): net = Sequential(shared, ReLU, shared) with buffer `buf`,
    inner = Sequential(shared) holding the same tensor as buffer `b2`."""
    shared = pycoll.nn.Linear(2, 2)
    net = pycoll.nn.Sequential(shared, pycoll.nn.ReLU(), shared)
    net.register_buffer("buf", pycoll.zeros([1]))
    inner = pycoll.nn.Sequential(shared)
    inner.register_buffer("b2", net.buf)
    return pycoll.nn.Sequential(net, inner), shared


@pytest.mark.parametrize("method, names", [
    ("named_sublayers", ["prefix", "include_self", "layers_set", "remove_duplicate"]),
    ("named_parameters", ["prefix", "include_sublayers", "remove_duplicate"]),
    ("named_buffers", ["prefix", "include_sublayers", "remove_duplicate"]),
])
def test_signatures_are_paddles(method, names):
    parameters = inspect.signature(getattr(pycoll.nn.Layer, method)).parameters
    assert list(parameters)[1:] == names
    assert parameters["remove_duplicate"].default is True


@pytest.mark.parametrize("kwargs", [{}, {"remove_duplicate": True}])
def test_shared_layers_and_tensors_come_once_by_default(kwargs):
    outer, _ = _model()
    assert [(p, type(m).__name__) for p, m in outer.named_sublayers(**kwargs)] == [
        ("0", "Sequential"), ("0.0", "Linear"), ("0.1", "ReLU"), ("1", "Sequential")]
    assert [p for p, _ in outer.named_parameters(**kwargs)] == ["0.0.weight", "0.0.bias"]
    assert [p for p, _ in outer.named_buffers(**kwargs)] == ["0.buf"]


def test_without_remove_duplicate_each_path_comes():
    outer, shared = _model()
    assert [(p, type(m).__name__) for p, m in outer.named_sublayers(prefix="m", include_self=True,
                                                                    remove_duplicate=False)] == [
        ("m", "Sequential"), ("m.0", "Sequential"), ("m.0.0", "Linear"), ("m.0.1", "ReLU"), ("m.0.2", "Linear"),
        ("m.1", "Sequential"), ("m.1.0", "Linear")]
    assert [p for p, _ in outer.named_sublayers("", False, None, False)] == ["0", "0.0", "0.1", "0.2", "1", "1.0"]
    params = list(outer.named_parameters("", True, False))
    assert [p for p, _ in params] == ["0.0.weight", "0.0.bias", "0.2.weight", "0.2.bias", "1.0.weight", "1.0.bias"]
    assert params[0][1] is params[2][1] is params[4][1] is shared.weight
    assert [p for p, _ in outer.named_buffers(remove_duplicate=False)] == ["0.buf", "1.b2"]


def test_remove_duplicate_with_this_layer_only():
    outer, _ = _model()
    net = outer[0]
    assert list(net.named_parameters(include_sublayers=False, remove_duplicate=False)) == []
    assert [p for p, _ in net.named_buffers(prefix="x", include_sublayers=False, remove_duplicate=False)] == ["x.buf"]


def test_layers_set_holds_layers_to_skip():
    outer, shared = _model()
    assert [p for p, _ in outer.named_sublayers(layers_set={shared})] == ["0", "0.1", "1"]


def test_list_forms_are_unchanged():
    outer, _ = _model()
    assert (len(outer.sublayers()), len(outer.parameters()), len(outer.buffers())) == (4, 2, 1)
    assert [n for n, _ in outer[0].named_children()] == ["0", "1"]


def test_a_tensor_assigned_to_an_attribute_is_a_buffer_state_dict_leaves_out():
    # paddle 3.3.1 (measured): named_buffers() ['buf', 'mask'], with remove_duplicate=False
    # ['buf', 'alias', 'mask']; a plain Tensor attribute is a non-persistable buffer
    class Net(pycoll.nn.Layer):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", pycoll.ones([1]))
            self.alias = self.buf
            self.mask = pycoll.ones([2])
            self.steps = pycoll.to_tensor([3], dtype="int64")

    net = Net()
    assert [n for n, _ in net.named_buffers()] == ["buf", "mask", "steps"]
    assert [n for n, _ in net.named_buffers(remove_duplicate=False)] == ["buf", "alias", "mask", "steps"]
    assert list(net.state_dict()) == ["buf"]  # only register_buffer's persistable one
    net.to(dtype="float64")
    assert net.mask.dtype == np.float64 and net.steps.dtype == np.float64  # cast with the layer, ints too (paddle's)
    net.mask = None
    assert [n for n, _ in net.named_buffers()] == ["buf", "steps"]


def test_a_tensor_before_super_init_is_refused():
    # paddle 3.3.1: ValueError "super().__init__() should be called first"
    class Early(pycoll.nn.Layer):
        def __init__(self):
            self.mask = pycoll.ones([2])
            super().__init__()

    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\) before assigning parameters, "
                                           r"sublayers or tensors"):
        Early()


def test_attribute_rules_paddle_keeps_for_sublayers_buffers_and_names():
    # paddle 3.3.1 (measured): a non-Layer over a sublayer is a TypeError (`self.fc = self.fc(x)`),
    # None empties it; register_buffer over a plain attribute is a KeyError; tensors that are not
    # parameters are named eager_tmp_N, so a state dict keyed by names loads buffers too
    net = pycoll.nn.Linear(2, 2)
    holder = pycoll.nn.Layer()
    holder.fc = net
    with pytest.raises(TypeError, match="attribute 'fc' is a sublayer: assign a Layer or None, got Tensor"):
        holder.fc = pycoll.ones([2])
    with pytest.raises(TypeError, match="got int"):
        holder.fc = 5
    holder.fc = None
    assert list(holder.named_children()) == [] and holder.state_dict() == {}
    holder.x = 3
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        holder.register_buffer("x", pycoll.ones([1]))
    t = pycoll.ones([1])
    assert t.name.startswith("eager_tmp_") and t.name == t.name and pycoll.ones([1]).name != t.name
    assert net.weight.name.endswith(".w_0")


@pytest.mark.parametrize("make, shape", [(lambda: pycoll.nn.Linear(4, 3), [2, 4]),
                                         (lambda: pycoll.nn.BatchNorm1D(4), [2, 4]),
                                         (lambda: pycoll.nn.LayerNorm(4), [2, 4]),
                                         (lambda: pycoll.nn.Dropout(0.5), [2, 4]),
                                         (lambda: pycoll.nn.Sequential(pycoll.nn.Linear(4, 2)), [2, 4])])
def test_layers_take_their_input_by_paddles_keyword(make, shape):
    # paddle 3.3.1 names the input of these layers' forward `input`: layer(input=x) works there
    layer = make()
    layer.eval()
    x = pycoll.rand(shape)
    np.testing.assert_array_equal(layer(input=x).numpy(), layer(x).numpy())


def test_names_paddle_gives_copies_and_reads_and_the_clashes_it_refuses():
    # paddle 3.3.1 (measured): a deep-copied parameter is <name>_deepcopy_N, so one optimizer
    # takes a model and its copy; reading a plain tensor's name leaves optimizer keys as they were
    import copy
    net = pycoll.nn.Linear(2, 2)
    twin = copy.deepcopy(net)
    assert twin.weight.name.startswith(net.weight.name + "_deepcopy_")
    opt = pycoll.optimizer.Adam(parameters=net.parameters() + twin.parameters())
    w = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    assert w.name.startswith("eager_tmp_")
    plain = pycoll.optimizer.Adam(parameters=[w])
    (w * w).sum().backward()
    plain.step()
    keys = [k for k in plain.state_dict() if k != "LR_Scheduler"]
    assert keys and all(k.startswith("param_0_") for k in keys), keys  # not eager_tmp_N's: resumable
    assert len(opt._parameter_list) == 4
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        net.register_buffer("weight", pycoll.ones([1]))
    with pytest.raises(TypeError, match="attribute 'weight' is a parameter"):
        net.weight = pycoll.nn.Linear(1, 1)
    params = pycoll.nn.ParameterList([pycoll.create_parameter([1], "float32")])
    params[0] = pycoll.ones([1])  # a plain tensor becomes a trainable parameter there (paddle's)
    assert isinstance(params[0], pycoll.nn.Parameter) and not params[0].stop_gradient


def test_input_stays_a_keyword_for_a_forward_taking_kwargs():
    class Free(pycoll.nn.Layer):
        def forward(self, x=None, **kwargs):
            return x, sorted(kwargs)

    assert Free()(input=pycoll.ones([2]))[1] == ["input"] and Free()(input=1)[0] is None
