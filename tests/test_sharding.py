"""pycoll.distributed.sharding: paddle's greedy ownership, every level on real ranks, and fleet's
sharding stages and gradient merge."""
import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import assert_ok, launch, launch_source
from pycoll.distributed.sharding import group_sharded_parallel
from pycoll.parallel.segments import Segments, piece_bounds


def test_each_rank_owns_an_even_piece_of_each_parameter():
    assert [piece_bounds(10, 4, r) for r in range(4)] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert [piece_bounds(2, 4, r) for r in range(4)] == [(0, 1), (1, 2), (2, 2), (2, 2)]


def test_a_bucket_layout_puts_each_ranks_pieces_together_and_round_trips():
    shapes = [(3,), (2, 5), (1,)]
    layout = Segments(shapes, 4)
    values = [np.arange(np.prod(s), dtype=np.float32).reshape(s) + 100 * i for i, s in enumerate(shapes)]
    flat = np.empty(4 * layout.width, np.float32)
    layout.pack(values, flat, 0.5, np)
    parts = flat.reshape(4, layout.width)
    assert parts[1].tolist() == [0.5, 51.5, 52.0, 52.5, 0.0]  # rank 1: x[1], y[3:6], padding for z
    for r in range(4):
        pieces = layout.part_pieces(parts[r], r)
        for value, piece in zip(values, pieces):
            lo, hi = piece_bounds(value.size, 4, r)
            np.testing.assert_array_equal(piece, value.reshape(-1)[lo:hi] * 0.5)
        again = np.empty(layout.width, np.float32)
        layout.pack_part(pieces, again, np)
        np.testing.assert_array_equal(again, parts[r])
    targets = [np.zeros(s, np.float32) for s in shapes]
    layout.unpack(flat.reshape(4, layout.width), targets, np)
    for value, target in zip(values, targets):
        np.testing.assert_array_equal(target, value * 0.5)


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_every_level_trains_like_data_parallel_holding_a_share(nprocs, tmp_path):
    assert_ok(launch(nprocs, "sharding_equivalence.py", str(tmp_path), timeout=120), expect_lines=nprocs)


def test_fleet_sharding_stages_and_gradient_merge_train_as_one_process():
    assert_ok(launch(4, "fleet_sharding.py", timeout=120), expect_lines=4)


def test_a_sharded_optimizer_driven_by_a_scheduler_saves_and_resumes_it():
    """whole_state_dict carries the scheduler's state under paddle's key, and loads back."""
    dist.init_parallel_env()
    pycoll.seed(3)
    model = nn.Linear(4, 4)
    scheduler = pycoll.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    model, opt, _ = group_sharded_parallel(model, pycoll.optimizer.Adam(learning_rate=scheduler,
                                                                         parameters=model.parameters()), "os_g")
    for _ in range(2):
        model(pycoll.ones([2, 4])).sum().backward()
        opt.step()
        opt.clear_grad()
        scheduler.step()
    state = opt.whole_state_dict()
    assert state["LR_Scheduler"] == {"last_epoch": 2, "last_lr": 0.025}
    scheduler.step()
    opt.set_state_dict(state)
    assert opt.get_lr() == 0.025 and scheduler.last_epoch == 2


def test_a_sharded_optimizer_steps_through_minimize_and_refuses_given_gradients():
    """It updates from the gradients' reduced pieces: every parameter or none."""
    dist.init_parallel_env()
    model = nn.Linear(2, 2)
    model, opt, _ = group_sharded_parallel(model, pycoll.optimizer.SGD(parameters=model.parameters()), "os_g")
    before = model.parameters()[0].numpy().copy()
    model(pycoll.ones([1, 2])).sum().backward()
    assert opt.minimize(None)[0] == [] and not np.array_equal(model.parameters()[0].numpy(), before)
    for form in (lambda: opt.minimize(None, parameters=model.parameters()[:1]), lambda: opt.apply_gradients([])):
        with pytest.raises(NotImplementedError, match="ShardedOptimizer: its step updates every parameter"):
            form()
    opt.zero_grad()


@pytest.mark.parametrize("level", ["os", "os_g", "p_g_os"])
def test_a_sharded_optimizer_refuses_a_state_of_other_parameters_as_an_unsharded_one_does(level):
    """A state saved from a model whose parameter names differ was dropped entry by entry and
    the step then started afresh, silently; the inner optimizer now sees it and refuses it."""
    dist.init_parallel_env()
    trained = nn.Linear(4, 4)
    opt = pycoll.optimizer.Adam(parameters=trained.parameters())
    trained(pycoll.ones([2, 4])).sum().backward()
    opt.step()
    state = opt.state_dict()
    other = nn.Linear(4, 4)  # other names: linear_<n+1>
    model, sharded, _ = group_sharded_parallel(other, pycoll.optimizer.Adam(parameters=other.parameters()), level)
    with pytest.raises(ValueError, match="does not fit this optimizer's parameters"):
        sharded.set_state_dict(state)
    renamed = {key.replace(trained.weight.name, other.weight.name).replace(trained.bias.name, other.bias.name): value
               for key, value in state.items()}
    sharded.set_state_dict(renamed)  # the same state under this model's names loads
    np.testing.assert_array_equal(sharded.whole_state_dict()[f"{other.weight.name}_moment1_0"].numpy(),
                                  state[f"{trained.weight.name}_moment1_0"].numpy())


def test_a_sharded_optimizers_state_saves_each_ranks_own_piece_and_resumes(tmp_path):
    assert_ok(launch(2, "sharding_checkpoint.py", str(tmp_path), timeout=120), expect_lines=2)


@pytest.mark.parametrize("nprocs", [2, 3])
def test_every_way_of_sharding_steps_as_the_unsharded_optimizer_reads_parameters_and_groups(nprocs):
    """ParamAttr learning rates and regularizers, need_clip=False, per-group clips and Lamb's
    whole-parameter trust ratio, at each group_sharded_parallel level and under fully_shard."""
    assert_ok(launch(nprocs, "sharding_param_options.py", "gsp", timeout=120), expect_lines=nprocs)


def test_fleet_sharding_steps_as_the_unsharded_optimizer_reads_parameters_and_groups():
    assert_ok(launch(3, "sharding_param_options.py", "fleet", timeout=120), expect_lines=3)


# the start of the two-rank programs below
_HEAD = ("import numpy as np, pycoll, pycoll.nn as nn, pycoll.distributed as dist\n"
         "from pycoll.distributed.sharding import group_sharded_parallel\n"
         "dist.init_parallel_env()\n")


@pytest.mark.parametrize("level", ["os", "os_g", "p_g_os"])
def test_a_frozen_or_unused_parameter_stays_put_at_every_level(level, tmp_path):
    # a probe: under sharding, a layer frozen after a step moved on under momentum (its zeroed
    # gradient stepped), and at os_g / p_g_os a layer forward never used took AdamW's decay (its
    # piece came back as zeros); one process and DataParallel leave both where they are
    assert_ok(launch_source(tmp_path,
        _HEAD + "class Net(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.first, self.second, self.unused = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)\n"
        "    def forward(self, x):\n"
        "        return self.second(self.first(x))\n"
        "net = Net()\n"
        "for p in net.parameters():\n"
        "    p.set_value(np.full(p.shape, 0.5, 'float32'))\n"
        "opt = pycoll.optimizer.Momentum(0.1, momentum=0.9, parameters=net.parameters(), weight_decay=0.5)\n"
        f"model, opt, _ = group_sharded_parallel(net, opt, {level!r})\n"
        "x = pycoll.ones([2, 4])\n"
        "model(x).mean().backward(); opt.step(); opt.clear_grad()\n"
        "if hasattr(model, 'get_all_parameters'):\n"
        "    model.get_all_parameters()\n"
        "frozen = net.first.weight.numpy().copy()\n"
        "assert (net.unused.weight.numpy() == 0.5).all(), net.unused.weight.numpy()\n"
        "for p in net.first.parameters():\n"
        "    p.stop_gradient = True\n"
        "model(x).mean().backward(); opt.step(); opt.clear_grad()\n"
        "if hasattr(model, 'get_all_parameters'):\n"
        "    model.get_all_parameters()\n"
        "assert (net.first.weight.numpy() == frozen).all() and (net.unused.weight.numpy() == 0.5).all()\n"
        "assert not (net.second.weight.numpy() == 0.5).all()  # the trained layer did move\n"
        "print(f'still OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_a_bad_level_raises_paddles_assertion_error_too():
    # paddle asserts the level; pycoll's ValueError names it: the class is both
    dist.init_parallel_env()
    net = nn.Linear(2, 2)
    with pytest.raises(AssertionError, match="level='stage2'; it must be one of os, os_g, p_g_os"):
        group_sharded_parallel(net, pycoll.optimizer.SGD(parameters=net.parameters()), "stage2")


def test_lazy_mode_updates_the_rows_looked_up_alone_at_every_level(tmp_path):
    # a probe: the sharded optimizer stepped flat pieces with no record of the rows, so Adam's
    # lazy_mode moved rows no batch had looked up (their moments) where DataParallel leaves them
    assert_ok(launch_source(tmp_path,
        _HEAD + "finals = {}\n"
        "for level in (None, 'os', 'os_g', 'p_g_os'):\n"
        "    emb = pycoll.nn.Embedding(5, 2, sparse=True)\n"
        "    emb.weight.set_value(np.ones((5, 2), 'float32'))\n"
        "    opt = pycoll.optimizer.AdamW(0.1, parameters=emb.parameters(), lazy_mode=True, weight_decay=0.5)\n"
        "    model = pycoll.DataParallel(emb) if level is None else None\n"
        "    if level:\n"
        "        model, opt, _ = group_sharded_parallel(emb, opt, level)\n"
        "    for step in range(3):  # row 0 only at the first step, then row 1\n"
        "        model(pycoll.to_tensor([0 if step == 0 else 1])).sum().backward()\n"
        "        opt.step(); opt.clear_grad()\n"
        "    if hasattr(model, 'get_all_parameters'):\n"
        "        model.get_all_parameters()\n"
        "    finals[level] = emb.weight.numpy().copy()\n"
        "assert (finals[None][2:] == 1).all() and not (finals[None][:2] == 1).any(), finals[None]\n"
        "for level in ('os', 'os_g', 'p_g_os'):\n"
        "    np.testing.assert_allclose(finals[level], finals[None], rtol=1e-6, err_msg=level)\n"
        "print(f'lazy OK rank={dist.get_rank()}')\n"), expect_lines=2)


@pytest.mark.parametrize("set_to_zero", [True, False])
def test_a_parameter_used_once_steps_on_its_zeroed_gradient_as_under_data_parallel(set_to_zero, tmp_path):
    # a probe: at os_g / p_g_os a parameter used at the first step only stopped moving, where
    # clear_grad()'s zeroed gradient keeps it stepping (weight decay, momentum) unsharded
    assert_ok(launch_source(tmp_path,
        _HEAD + "class Net(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.always, self.once = nn.Linear(4, 1), nn.Linear(4, 1)\n"
        "    def forward(self, x, step):\n"
        "        return self.always(x) + (self.once(x) if step == 0 else 0)\n"
        "finals = {}\n"
        "for level in (None, 'os', 'os_g', 'p_g_os'):\n"
        "    net = Net()\n"
        "    for p in net.parameters():\n"
        "        p.set_value(np.full(p.shape, 0.5, 'float32'))\n"
        "    opt = pycoll.optimizer.Momentum(0.1, momentum=0.9, parameters=net.parameters(), weight_decay=0.5)\n"
        "    model = pycoll.DataParallel(net, find_unused_parameters=True) if level is None else None\n"
        "    if level:\n"
        "        model, opt, _ = group_sharded_parallel(net, opt, level)\n"
        "    for step in range(4):\n"
        "        model(pycoll.ones([2, 4]), step).mean().backward()\n"
        f"        opt.step(); opt.clear_grad(set_to_zero={set_to_zero})\n"
        "    if hasattr(model, 'get_all_parameters'):\n"
        "        model.get_all_parameters()\n"
        "    finals[level] = net.once.weight.numpy().copy()\n"
        "for level in ('os', 'os_g', 'p_g_os'):\n"
        "    np.testing.assert_allclose(finals[level], finals[None], rtol=1e-6, err_msg=level)\n"
        "print(f'once OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_sharding_inside_data_parallelism_with_a_layer_one_replica_uses_trains_as_one_process(tmp_path):
    # a probe (4 ranks, sharding [0, 1] / [2, 3] inside data parallelism [0, 2] / [1, 3]): after
    # the first step each sharding group rebuilt its buckets from its own ready order, and the
    # all-reduce across the replicas then added buckets holding other parameters, silently
    assert_ok(launch_source(tmp_path,
        _HEAD + "rank = dist.get_rank()\n"
        "shard = [dist.new_group([0, 1]), dist.new_group([2, 3])][rank // 2]\n"
        "replicas = [dist.new_group([0, 2]), dist.new_group([1, 3])][rank % 2]\n"
        "class Net(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)\n"
        "        for layer in (self.a, self.b):\n"
        "            layer.weight.set_value(np.eye(2, dtype='float32'))\n"
        "            layer.bias.set_value(np.zeros(2, 'float32'))\n"
        "    def forward(self, x, use_b):\n"
        "        h = self.a(x)\n"
        "        return self.b(h) if use_b else h\n"
        "rows = np.arange(1, 5, dtype='float32')[:, None].repeat(2, 1)  # rank k's row: [k + 1, k + 1]\n"
        "def loss(model, k):\n"
        "    return model(pycoll.to_tensor(rows[k:k + 1]), k == 0).sum()  # b on rank 0 alone\n"
        "whole = Net()\n"
        "opt = pycoll.optimizer.SGD(0.1, parameters=whole.parameters())\n"
        "for _ in range(3):\n"
        "    (sum(loss(whole, k) for k in range(4)) / 4).backward(); opt.step(); opt.clear_grad()\n"
        "for level in ('os', 'os_g', 'p_g_os'):\n"
        "    net = Net()\n"
        "    model, opt, _ = group_sharded_parallel(net, pycoll.optimizer.SGD(0.1, parameters=net.parameters()),\n"
        "                                           level, group=shard, dp_group=replicas)\n"
        "    for _ in range(3):\n"
        "        loss(model, rank).backward(); opt.step(); opt.clear_grad()\n"
        "    if hasattr(model, 'get_all_parameters'):\n"
        "        model.get_all_parameters()\n"
        "    for (name, p), q in zip(net.named_parameters(), whole.parameters()):\n"
        "        np.testing.assert_allclose(p.numpy(), q.numpy(), atol=1e-6, err_msg=f'{level} {name}')\n"
        "print(f'2x2 OK rank={rank}')\n", nprocs=4, timeout=180), expect_lines=4)


def test_ranks_gathering_different_layers_at_p_g_os_are_told_not_mixed(tmp_path):
    # a probe: rank 0 ran layer a and rank 1 layer b (the same sizes): each got half of each
    # other's parameters, silently; the gather's tag names what each rank gathered
    assert_ok(launch_source(tmp_path,
        _HEAD + "class Net(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)\n"
        "    def forward(self, x, use_a):\n"
        "        return self.a(x) if use_a else self.b(x)\n"
        "net = Net()\n"
        "model, opt, _ = group_sharded_parallel(net, pycoll.optimizer.SGD(0.1, parameters=net.parameters()), 'p_g_os',\n"
        "                                       segment_size=1)  # every parameter held only in use\n"
        "assert float(model(pycoll.ones([1, 8]), True).sum()) == float(net.a(pycoll.ones([1, 8])).sum())\n"
        "try:\n"
        "    model(pycoll.ones([1, 8]), dist.get_rank() == 0)\n"
        "except pycoll.CollectiveError as err:\n"
        "    assert 'gathered the parameters of different layers (rank 0: linear_0.w_0, rank 1: linear_1.w_0)' in str(err), err\n"
        "    print(f'told OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_ranks_gathering_layers_of_different_sizes_at_p_g_os_are_told_which(tmp_path):
    # a probe: the tag sat after the data, so the rank whose gather MPI did not fail read it
    # from the wrong place and died of an IndexError; at the start it is where it is read
    result = launch_source(tmp_path,
        _HEAD + "class Net(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 24)\n"
        "    def forward(self, x, use_a):\n"
        "        return self.a(x) if use_a else self.b(x)[:, :8]\n"
        "net = Net()\n"
        "model, opt, _ = group_sharded_parallel(net, pycoll.optimizer.SGD(0.1, parameters=net.parameters()), 'p_g_os',\n"
        "                                       segment_size=1)\n"
        "model(pycoll.ones([1, 8]), dist.get_rank() == 0)\n")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "gathered the parameters of different layers (rank 0: linear_0.w_0, rank 1: linear_1.w_0)" in output, output
    assert "IndexError" not in output, output


def test_a_parameter_unfrozen_after_sharding_is_refused_at_the_step(tmp_path):
    # a probe: it took gradients and never moved, silently (paddle's fleet trains it)
    assert_ok(launch_source(tmp_path,
        _HEAD + "net = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 1))\n"
        "net[0].weight.stop_gradient = True\n"
        "model, opt, _ = group_sharded_parallel(net, pycoll.optimizer.SGD(0.1, parameters=net.parameters()), 'os')\n"
        "net[0].weight.stop_gradient = False\n"
        "model(pycoll.to_tensor([[1, 2]])).sum().backward()\n"
        "try:\n"
        "    opt.step()\n"
        "except RuntimeError as err:\n"
        "    assert \"parameters ['embedding_0.w_0'] were frozen\" in str(err), err\n"
        "    print(f'refused OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_a_sharded_optimizer_takes_a_scheduler_later_and_shows_paddles_attributes(tmp_path):
    assert_ok(launch_source(tmp_path,
        _HEAD + "net = nn.Linear(4, 4)\n"
        "clip = nn.ClipGradByGlobalNorm(1.0)\n"
        "model, opt, _ = group_sharded_parallel(net, pycoll.optimizer.SGD(0.1, parameters=net.parameters(),\n"
        "                                                                 grad_clip=clip), 'os_g')\n"
        "assert opt._grad_clip is clip and opt._learning_rate == 0.1\n"
        "sched = pycoll.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)\n"
        "opt.set_lr_scheduler(sched)\n"
        "assert opt._learning_rate is sched and opt.get_lr() == 0.05\n"
        "sched.step()\n"
        "assert opt.get_lr() == 0.025\n"
        "print(f'attributes OK rank={dist.get_rank()}')\n"), expect_lines=2)
