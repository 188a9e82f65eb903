"""paddle's high-level API in pycoll: Model (fit / evaluate / predict / the batch steps / save /
load), summary and the callbacks.

Every expected number and printed line was measured on paddle 3.3.1 (CPU) running the same
script with ``paddle`` for ``pycoll``; the two-rank numbers under paddle.distributed.launch
(tests/ranks/hapi_fit.py holds those). Times and ETAs are masked in the printed lines.
"""
import importlib.util
import os
import re
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from conftest import RANKS_DIR, assert_ok, launch, run_python
from pycoll.hapi.progress import ProgressBar
from pycoll.static import InputSpec

_spec = importlib.util.spec_from_file_location("hapi_fit", RANKS_DIR / "hapi_fit.py")
hapi_fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hapi_fit)
Pairs = hapi_fit.pairs_class(pycoll)
NOTICE = ("The loss value printed in the log is the current step, and the metric is the average value of "
          "previous steps.")


def mlp(hidden=8):
    net = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, 2))
    r = np.random.RandomState(1)
    net.set_state_dict({k: pycoll.to_tensor(r.uniform(-0.5, 0.5, v.shape).astype("float32"))
                        for k, v in net.state_dict().items()})
    return net


def model_with(optimizer, lr, metrics=None, **opt_args):
    model = pycoll.Model(mlp())
    model.prepare(optimizer(learning_rate=lr, parameters=model.parameters(), **opt_args), nn.CrossEntropyLoss(),
                  metrics)
    return model


def weight_sums(model):
    return [float(p.numpy().sum()) for p in model.parameters()]


def screen(text):
    """Printed text as lines, the redrawn progress bar's states one per line, times masked."""
    text = re.sub(r"\d+(ms|us|s)/step", "T/step", text.replace("\b", ""))
    text = re.sub(r"ETA: \S+", "ETA: T", text)
    return [line.rstrip() for line in re.split(r"[\r\n]", text) if line.strip()]


# -- the numbers of a training run ----------------------------------------------------------------
def test_fit_evaluate_and_predict_give_paddles_numbers():
    got = hapi_fit.train(pycoll)  # Adam, CrossEntropyLoss, Accuracy: 3 epochs of 37 samples, eval on 13
    np.testing.assert_allclose(got["train"], [[0.28908249735832214, 0.6756756756756757],
                                              [0.003896725829690695, 0.8918918918918919],
                                              [7.188578456407413e-05, 0.972972972972973]], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["eval"], [[0.004987078253179789, 1.0, 1], [0.00038559717359021306, 1.0, 1],
                                             [5.364432581700385e-06, 1.0, 1]], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose([got["loss"], got["acc"]], [0.0047234296798706055, 1.0], rtol=2e-5, atol=1e-6)
    predicted = got["predicted"]
    assert predicted.shape == (13, 2) and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted[0], [-2.8031725883483887, 2.2345967292785645], rtol=1e-5)
    np.testing.assert_allclose(predicted.sum(0), [20.027976989746094, -33.56183624267578], rtol=1e-5)
    sums = {k: float(v.sum()) for k, v in got["weights"].items()}
    np.testing.assert_allclose([sums["fc1.weight"], sums["fc1.bias"], sums["fc2.weight"], sums["fc2.bias"]],
                               [-3.7183565157465637, 1.0846112370491028, -1.3018040265887976, -0.2791537940502167],
                               rtol=1e-5)


def test_two_ranks_train_through_data_parallel_and_evaluate_over_the_whole_set():
    assert_ok(launch(2, "hapi_fit.py", timeout=120), expect_lines=2)


def test_logs_schedules_accumulation_num_iters_and_batch_steps_follow_paddle(capsys):
    train, test = Pairs(20, 2), Pairs(9, 3)
    model = pycoll.Model(mlp(), inputs=[InputSpec([None, 4], "float32", "x")],
                         labels=[InputSpec([None, 1], "int64", "y")])
    schedule = pycoll.optimizer.lr.StepDecay(0.1, step_size=3, gamma=0.5)
    optimizer = pycoll.optimizer.SGD(learning_rate=schedule, parameters=model.parameters())
    model.prepare(optimizer, nn.CrossEntropyLoss())
    # 7 batches of 3, a step every 2 and at the last: 4 optimizer steps per epoch, the scheduler
    # (the LRScheduler callback) stepped after each of the 14 batches
    model.fit(train, batch_size=[3, 4], epochs=2, shuffle=False, verbose=1, accumulate_grad_batches=2, log_freq=2)
    assert optimizer.get_lr() == pytest.approx(0.00625)
    np.testing.assert_allclose(weight_sums(model), [-2.4298799857497215, 0.7975639211945236, -1.301803955808282,
                                                    -0.27915382385253906], rtol=1e-5)
    evaluated = model.evaluate(test, batch_size=4, verbose=0)
    assert list(evaluated) == ["loss"] and isinstance(evaluated["loss"], list)
    np.testing.assert_allclose(evaluated["loss"][0], 0.11919466406106949, rtol=1e-5)
    # num_iters counts evaluation steps too (paddle's): 5 training steps, then 2 of the 3 evaluation steps
    model.fit(train, test, batch_size=4, epochs=5, num_iters=7, shuffle=False, verbose=2, log_freq=1)
    np.testing.assert_allclose(weight_sums(model), [-2.430864293128252, 0.7981220781803131, -1.301804043352604,
                                                    -0.27915385365486145], rtol=1e-5)
    x, y = train.x[:5], train.y[:5]
    np.testing.assert_allclose(model.train_batch([x], [y])[0], 0.5473994016647339, rtol=1e-5)
    np.testing.assert_allclose(model.eval_batch([x], [y])[0], 0.5469051599502563, rtol=1e-5)
    np.testing.assert_allclose(model.predict_batch([x])[0][:2], [[0.5515605211257935, 0.3180014193058014],
                                                                 [-0.0767764002084732, -1.6401251554489136]],
                               rtol=1e-5)
    print(model.predict(test, batch_size=4, verbose=2)[0][0].shape)
    metrics_only = pycoll.Model(mlp())
    metrics_only.prepare(metrics=[pycoll.metric.Accuracy(topk=(1, 2))])
    assert metrics_only.evaluate(test, batch_size=4, verbose=2) == {"acc_top1": pytest.approx(2 / 3), "acc_top2": 1.0}
    assert metrics_only.eval_batch([test.x[:4]], [test.y[:4]]) == [[0.5, 1.0]]
    assert screen(capsys.readouterr().out) == [
        NOTICE, "Epoch 1/2",
        "step 2/7 [=======>......................] - loss: 0.5814 - ETA: T - T/step",
        "step 4/7 [================>.............] - loss: 0.8297 - ETA: T - T/step",
        "step 6/7 [========================>.....] - loss: 0.4735 - ETA: T - T/step",
        "step 7/7 [==============================] - loss: 0.4648 - T/step",
        "Epoch 2/2",
        "step 2/7 [=======>......................] - loss: 0.5283 - ETA: T - T/step",
        "step 4/7 [================>.............] - loss: 0.8342 - ETA: T - T/step",
        "step 6/7 [========================>.....] - loss: 0.4451 - ETA: T - T/step",
        "step 7/7 [==============================] - loss: 0.4293 - T/step",
        NOTICE, "Epoch 1/2",
        "step 1/5 - loss: 0.4351 - T/step", "step 2/5 - loss: 0.5277 - T/step", "step 3/5 - loss: 0.7217 - T/step",
        "step 4/5 - loss: 0.4014 - T/step", "step 5/5 - loss: 0.4341 - T/step",
        "Eval begin...", "step 1/3 - loss: 0.7383 - T/step", "step 2/3 - loss: 0.4021 - T/step",
        "step 2/3 - loss: 0.4021 - T/step", "Eval samples: 8",
        "Predict begin...", "step 2/3 - T/step", "step 3/3 - T/step", "Predict samples: 9", "(4, 2)",
        "Eval begin...", "step 3/3 - acc_top1: 0.6667 - acc_top2: 1.0000 - T/step", "Eval samples: 9"]


def test_shuffled_training_reads_paddles_order():
    model = model_with(pycoll.optimizer.SGD, 0.1)
    model.fit(Pairs(20, 2), batch_size=4, epochs=2, shuffle=True, verbose=0)
    np.testing.assert_allclose(weight_sums(model), [-2.4772820584475994, 0.817756830714643, -1.301803819835186,
                                                    -0.27915380895137787], rtol=1e-5)


def test_predict_returns_each_output_batch_by_batch_or_stacked():
    class TwoHeads(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = self.fc(x)
            return y, y.sum(axis=1)

    net = TwoHeads()
    model = pycoll.Model(net)
    data = Pairs(7, 4)
    heads = model.predict(data, batch_size=3, verbose=0)
    assert [len(h) for h in heads] == [3, 3] and [a.shape for a in heads[0]] == [(3, 3), (3, 3), (1, 3)]
    stacked = model.predict(data, batch_size=3, verbose=0, stack_outputs=True)
    want = data.x @ net.fc.weight.numpy() + net.fc.bias.numpy()
    np.testing.assert_allclose(stacked[0], want, rtol=1e-6, atol=1e-6)  # an entry near zero: its last bits differ between BLAS paths
    np.testing.assert_allclose(stacked[1], want.sum(1), rtol=1e-5, atol=1e-6)


def test_predict_stacks_one_scalar_per_batch_as_paddles_vstack():
    """A network that returns a 0-d tensor per batch: [batches, 1], as paddle 3.3.1 gives."""
    class Total(nn.Layer):
        def forward(self, x):
            return x.sum()

    data = Pairs(7, 4)
    stacked = pycoll.Model(Total()).predict(data, batch_size=3, verbose=0, stack_outputs=True)
    want = [[data.x[i:i + 3].sum()] for i in range(0, 7, 3)]
    assert stacked[0].shape == (3, 1)
    np.testing.assert_allclose(stacked[0], want, rtol=1e-6)


def test_a_dataloader_is_used_as_it_is_and_callbacks_see_paddles_hooks():
    seen = []

    class Record(pycoll.callbacks.Callback):
        def on_train_batch_end(self, step, logs=None):
            seen.append(("train", step, logs["batch_size"], sorted(logs)))

        def on_eval_end(self, logs=None):
            seen.append(("eval", sorted(logs)))

        def on_train_end(self, logs=None):
            seen.append(("end", self.params))

    loader = pycoll.io.DataLoader(Pairs(10, 2), batch_size=4)
    model = model_with(pycoll.optimizer.SGD, 0.1, pycoll.metric.Accuracy())
    model.fit(loader, loader, epochs=1, verbose=0, callbacks=Record(), batch_size=99)  # batch_size: the loader's
    assert seen == [("train", 0, 4, ["acc", "batch_size", "loss", "step"]),
                    ("train", 1, 4, ["acc", "batch_size", "loss", "step"]),
                    ("train", 2, 2, ["acc", "batch_size", "loss", "step"]),
                    ("eval", ["acc", "batch_size", "loss", "step"]),
                    ("end", {"batch_size": None, "epochs": 1, "steps": 3, "verbose": 0, "metrics": ["loss", "acc"]})]


# -- checkpoints and the training callbacks -------------------------------------------------------
def test_save_load_round_trip_and_resume(tmp_path):
    train, test = Pairs(20, 2), Pairs(9, 3)
    first = model_with(pycoll.optimizer.Adam, 0.05, pycoll.metric.Accuracy())
    first.fit(train, test, batch_size=4, epochs=3, shuffle=False, verbose=0, save_dir=str(tmp_path), save_freq=2)
    assert sorted(os.listdir(tmp_path)) == ["0.pdopt", "0.pdparams", "2.pdopt", "2.pdparams", "final.pdopt",
                                            "final.pdparams"]
    second = model_with(pycoll.optimizer.Adam, 0.05, pycoll.metric.Accuracy())
    second.load(str(tmp_path / "final.pdparams"), reset_optimizer=True)
    for a, b in zip(first.parameters(), second.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    first.fit(train, batch_size=4, epochs=1, shuffle=False, verbose=0)
    after = [p.numpy().copy() for p in first.parameters()]
    first.load(str(tmp_path / "final"))  # the parameters and Adam's moments come back: the epoch repeats exactly
    for a, b in zip(first.parameters(), second.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    first.fit(train, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(first.parameters(), after):
        np.testing.assert_array_equal(a.numpy(), b)
    np.testing.assert_allclose(weight_sums(first), [-3.824172154068947, 0.20645328052341938, -1.3018036321736872,
                                                    -0.27915385365486145], rtol=1e-5)
    rebuilt = model_with(pycoll.optimizer.Adam, 0.05, pycoll.metric.Accuracy())  # other parameter names
    with pytest.warns(UserWarning, match=r"the optimizer state in .*final.pdopt is left out"):  # paddle fails later
        rebuilt.load(str(tmp_path / "final"))
    for a, b in zip(rebuilt.parameters(), second.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    wider = pycoll.Model(mlp(hidden=9))
    with pytest.raises(ValueError, match=re.escape("0.weight receives a shape [4, 8], but the expected shape is "
                                                   "[4, 9].")):
        wider.load(str(tmp_path / "final"))
    before = [p.numpy().copy() for p in wider.parameters()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wider.load(str(tmp_path / "final"), skip_mismatch=True)
    assert [str(w.message).split(".")[0] for w in caught] == ["Skip loading for 0", "Skip loading for 0",
                                                               "Skip loading for 2"]
    np.testing.assert_array_equal(wider.parameters()[3].numpy(), second.parameters()[3].numpy())  # 2.bias fits
    np.testing.assert_array_equal(wider.parameters()[0].numpy(), before[0])
    with pytest.raises(ValueError, match="Failed to load parameters"):
        wider.load(str(tmp_path / "nothere"))


def test_early_stopping_saves_the_best_model_and_stops_as_paddle(tmp_path, capsys):
    model = model_with(pycoll.optimizer.SGD, 3.0, pycoll.metric.Accuracy())
    stopper = pycoll.callbacks.EarlyStopping(monitor="acc", mode="max", patience=1, verbose=1, min_delta=0.01)
    epochs, accs = [], []

    class Record(pycoll.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            epochs.append(epoch)

        def on_eval_end(self, logs=None):
            accs.append(logs["acc"])

    model.fit(Pairs(20, 2), Pairs(9, 3), batch_size=2, epochs=20, shuffle=False, verbose=0, save_dir=str(tmp_path),
              callbacks=[stopper, Record()])
    assert epochs == [0, 1] and accs == [pytest.approx(7 / 9)] * 2 and stopper.best_value == pytest.approx(7 / 9)
    assert sorted(os.listdir(tmp_path)) == ["0.pdparams", "1.pdparams", "best_model.pdparams", "final.pdparams"]
    assert capsys.readouterr().out.splitlines() == [
        f"save checkpoint at {tmp_path}/0", f"save checkpoint at {tmp_path}/1", "Epoch 2: Early stopping.",
        f"Best checkpoint has been saved at {tmp_path}/best_model", f"save checkpoint at {tmp_path}/final"]


def test_reduce_lr_on_plateau_lowers_the_learning_rate_as_paddle(capsys):
    model = model_with(pycoll.optimizer.SGD, 0.5)
    plateau = pycoll.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, verbose=1, min_delta=10.0)
    model.fit(Pairs(20, 2), Pairs(9, 3), batch_size=4, epochs=4, shuffle=False, verbose=0, callbacks=[plateau])
    assert model._optimizer.get_lr() == 0.0625
    assert capsys.readouterr().out == "".join(f"\nEpoch {e}: ReduceLROnPlateau reducing learning rate to {lr}.\n"
                                              for e, lr in ((2, 0.25), (3, 0.125), (4, 0.0625)))


# -- summary ------------------------------------------------------------------------------------------
SUMMARY_SCRIPT = """
import pycoll
import pycoll.nn as nn


class LeNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
                                      nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))

    def forward(self, x):
        return self.fc(pycoll.flatten(self.features(x), 1))


class Two(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(5, 3, bias_attr=False)
        self.b.weight.stop_gradient = True
        self.act = nn.ReLU()

    def forward(self, x, y):
        return self.act(self.a(x)), [self.b(y), self.act(self.b(y))]


assert pycoll.summary(LeNet(), (-1, 1, 28, 28)) == {'total_params': 61610, 'trainable_params': 61610}
assert pycoll.summary(Two(), [(2, 4), pycoll.static.InputSpec([None, 5], 'float32', 'y')]) == {
    'total_params': 30, 'trainable_params': 15}
"""
RULE, DOUBLE = "-" * 75, "=" * 75
HEAD = " Layer (type)       Input Shape          Output Shape         Param #    "
PADDLE_TABLES = f"""{RULE}
{HEAD}
{DOUBLE}
   Conv2D-1       [[1, 1, 28, 28]]      [1, 6, 28, 28]          60       
    ReLU-1        [[1, 6, 28, 28]]      [1, 6, 28, 28]           0       
  MaxPool2D-1     [[1, 6, 28, 28]]      [1, 6, 14, 14]           0       
   Conv2D-2       [[1, 6, 14, 14]]     [1, 16, 10, 10]         2,416     
    ReLU-2       [[1, 16, 10, 10]]     [1, 16, 10, 10]           0       
  MaxPool2D-2    [[1, 16, 10, 10]]      [1, 16, 5, 5]            0       
   Linear-1          [[1, 400]]            [1, 120]           48,120     
   Linear-2          [[1, 120]]            [1, 84]            10,164     
   Linear-3          [[1, 84]]             [1, 10]              850      
{DOUBLE}
Total params: 61,610
Trainable params: 61,610
Non-trainable params: 0
{RULE}
Input size (MB): 0.00
Forward/backward pass size (MB): 0.11
Params size (MB): 0.24
Estimated Total Size (MB): 0.35
{RULE}

{RULE}
{HEAD}
{DOUBLE}
   Linear-4           [[2, 4]]              [2, 3]              15       
    ReLU-3            [[1, 3]]              [1, 3]               0       
   Linear-5           [[1, 5]]              [1, 3]              15       
{DOUBLE}
Total params: 30
Trainable params: 15
Non-trainable params: 15
{RULE}
Input size (MB): 0.00
Forward/backward pass size (MB): 0.00
Params size (MB): 0.00
Estimated Total Size (MB): 0.00
{RULE}

"""  # noqa: W291 - paddle's table pads its rows with spaces


def test_summary_prints_paddles_table():
    # a fresh process: the rows are named after the layers' creation counters (Linear-1 ...)
    result = run_python(["-c", SUMMARY_SCRIPT], timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == PADDLE_TABLES


def test_summary_of_given_inputs_and_model_summary(capsys):
    net = nn.Linear(3, 2)
    assert pycoll.summary(net, input=pycoll.ones([7, 3])) == {"total_params": 8, "trainable_params": 8}
    assert "[[7, 3]]              [7, 2]" in capsys.readouterr().out
    net.train()
    model = pycoll.Model(net, inputs=[InputSpec([None, 3], "float32", "x")])
    counts = model.summary()
    assert counts == {"total_params": 8, "trainable_params": 8} and net.training
    assert all(type(n) is np.int64 for n in counts.values())  # paddle's type
    assert "[[1, 3]]              [1, 2]" in capsys.readouterr().out
    with pytest.raises(ValueError, match="only the dim of batch_size"):
        pycoll.summary(net, (None, None))
    with pytest.raises(ValueError, match="input_size and input cannot be None"):
        pycoll.summary(net)


def test_a_model_without_inputs_takes_its_specs_from_the_first_batch_as_paddles(capsys):
    net = nn.Linear(6, 2)
    model = pycoll.Model(net)  # the tutorials' form: no inputs=
    model.prepare(pycoll.optimizer.SGD(0.1, parameters=net.parameters()), nn.MSELoss())
    model.train_batch([np.ones((8, 6), np.float32)], [np.zeros((8, 2), np.float32)])
    model.eval_batch([np.ones((3, 6), np.float32)], [np.zeros((3, 2), np.float32)])  # the first batch's stay
    assert [spec.shape for spec in model._inputs] == [(8, 6)]
    assert model.summary() == {"total_params": 14, "trainable_params": 14}
    assert "[[8, 6]]              [8, 2]" in capsys.readouterr().out  # as paddle prints it after fit


def test_progress_bar_prints_paddles_numbers(capsys):
    values = [("loss", [0.00012]), ("acc", 0.5), ("n", 7), ("x", [np.float32(2.5), 3])]
    ProgressBar(num=None, verbose=2).update(3, values)
    ProgressBar(num=12, verbose=2).update(3, values)
    assert screen(capsys.readouterr().out) == [
        "step   3 - loss: 1.2000e-04 - acc: 0.5000 - n: 7 - x: 2.5000 3 - T/step",
        "step  3/12 - loss: 1.2000e-04 - acc: 0.5000 - n: 7 - x: 2.5000 3 - T/step"]


# -- wrong use ------------------------------------------------------------------------------------
def test_wrong_arguments_are_refused_by_name():
    model = pycoll.Model(mlp())
    with pytest.raises(RuntimeError, match="prepare"):
        model.train_batch([np.ones((2, 4), np.float32)], [np.zeros((2, 1), np.int64)])
    with pytest.raises(TypeError, match="'loss' must be"):
        model.prepare(loss="mse")
    with pytest.raises(TypeError, match="metrics: str is not sub class"):
        model.prepare(metrics=["acc"])
    with pytest.raises(ValueError, match="amp_configs"):
        model.prepare(amp_configs="O3")
    with pytest.raises(ValueError, match="could not be recognized"):
        model.prepare(amp_configs={"level": "O1", "bogus": 1})
    with pytest.raises(ValueError, match="train_data must be given"):
        model.fit()
    with pytest.raises(ValueError, match="batch_size=0"):
        model.fit(Pairs(4, 1), batch_size=0)
    with pytest.raises(ValueError, match="two sizes"):
        model.fit(Pairs(4, 1), batch_size=[1, 2, 3])
    with pytest.raises(ValueError, match="eval_data must be given"):
        model.evaluate(None)
    with pytest.raises(ValueError, match="num_iters=0"):
        model.evaluate(Pairs(4, 1), num_iters=0)
    with pytest.raises(TypeError, match="callbacks"):
        model.evaluate(Pairs(4, 1), callbacks=["early"], verbose=0)
    with pytest.raises(ValueError, match="name != None"):
        pycoll.Model(mlp(), inputs=[InputSpec([None, 4])])
    with pytest.raises(TypeError, match="InputSpec"):
        pycoll.Model(mlp(), inputs=[(None, 4)])
    with pytest.raises(TypeError, match="network must be"):
        pycoll.Model(lambda x: x)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        pycoll.callbacks.ReduceLROnPlateau(factor=1.5)
    with pytest.raises(ValueError, match="mutually exclusive"):
        pycoll.callbacks.LRScheduler(by_step=True, by_epoch=True)


def test_callbacks_import_as_paddles_module():
    """``from paddle.callbacks import EarlyStopping`` is how paddle scripts name them."""
    import subprocess
    import sys
    code = ("import sys; from pycoll.callbacks import EarlyStopping, Callback; import pycoll; "
            "assert pycoll.callbacks.EarlyStopping is EarlyStopping and issubclass(EarlyStopping, Callback); "
            "import pycoll.hapi; assert pycoll.hapi.callbacks.EarlyStopping is EarlyStopping; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_summary_gives_an_rnn_one_row_as_paddle():
    """paddle runs SimpleRNN/LSTM/GRU as one fused op: its table has one row for the LSTM (and
    none for its cells); the parameters are 5,760 (paddle 3.3.1's table, same network)."""
    import contextlib
    import io
    import re

    class Net(pycoll.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = pycoll.nn.Embedding(10, 8)
            self.lstm = pycoll.nn.LSTM(8, 12, num_layers=2, direction="bidirect")
            self.fc = pycoll.nn.Linear(24, 2)

        def forward(self, x):
            out, _ = self.lstm(self.emb(x))
            return self.fc(out[:, -1])

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        totals = pycoll.summary(Net(), input=pycoll.to_tensor([[1, 2, 3], [4, 5, 6]]))
    rows = [line.split() for line in printed.getvalue().splitlines() if re.match(r"\s+\w+-\d+\s", line)]
    assert [r[0].split("-")[0] for r in rows] == ["Embedding", "LSTM", "Linear"]
    assert rows[1][-1] == "5,760" and totals == {"total_params": 5890, "trainable_params": 5890}
