"""Model.fit / evaluate / predict of a small MLP, on 1 rank (tests/test_hapi.py imports `train`)
or, run as a script, on 2 ranks under the launcher: each rank's numbers are paddle 3.3.1's
(measured with the same `train`, given the paddle module, under paddle.distributed.launch), and
the evaluation's accuracy is over the whole set (checked against the network run on all of it)."""
import os
import shutil
import sys
import tempfile

import numpy as np


def pairs_class(fw):
    """A dataset class of framework ``fw``: n samples (x: 4 normal floats, y: whether
    x0 + x1 / 2 > 0) drawn with ``numpy.random.RandomState(seed)``."""
    class Pairs(fw.io.Dataset):
        def __init__(self, n, seed):
            r = np.random.RandomState(seed)
            self.x = r.randn(n, 4).astype("float32")
            self.y = (self.x[:, 0] + 0.5 * self.x[:, 1] > 0).astype("int64")[:, None]

        def __getitem__(self, i):
            return self.x[i], self.y[i]

        def __len__(self):
            return len(self.x)

    return Pairs


def train(fw, callbacks=()):
    """Train and evaluate with framework ``fw`` (pycoll, or paddle for the reference numbers),
    with ``callbacks`` besides the one that records the logs."""
    Pairs = pairs_class(fw)

    class Net(fw.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = fw.nn.Linear(4, 8)
            self.fc2 = fw.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(fw.nn.functional.relu(self.fc1(x)))

    class Record(fw.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.train, self.eval = [], []

        def on_epoch_end(self, epoch, logs=None):
            self.train.append([logs["loss"][0], logs["acc"]])

        def on_eval_end(self, logs=None):
            self.eval.append([logs["loss"][0], logs["acc"], logs["batch_size"]])

    net = Net()
    r = np.random.RandomState(1)
    net.set_state_dict({k: fw.to_tensor(r.uniform(-0.5, 0.5, v.shape).astype("float32"))
                        for k, v in net.state_dict().items()})
    model = fw.Model(net)
    model.prepare(fw.optimizer.Adam(learning_rate=0.05, parameters=model.parameters()),
                  fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
    record = Record()
    train_set, test_set = Pairs(37, 2), Pairs(13, 3)
    model.fit(train_set, test_set, batch_size=4, epochs=3, shuffle=False, verbose=0, callbacks=[record, *callbacks])
    evaluated = model.evaluate(test_set, batch_size=5, verbose=0)
    predicted = model.predict(test_set, batch_size=5, stack_outputs=True, verbose=0)[0]
    return {"train": record.train, "eval": record.eval, "loss": evaluated["loss"][0], "acc": evaluated["acc"],
            "predicted": predicted, "weights": {k: v.numpy() for k, v in net.state_dict().items()},
            "net": net, "test_set": test_set, "model": model}


# paddle 3.3.1, 2 ranks (paddle.distributed.launch --nproc_per_node 2): per rank, the (loss, acc)
# of each epoch's last step, each evaluation's (loss, acc, samples), evaluate()'s loss and acc,
# predict()'s first row and column sums over this rank's share, and (the same on both ranks) the
# sum of each weight after training
PADDLE_2_RANKS = {
    0: {"train": [[0.5564004182815552, 0.5263157894736842], [0.417406290769577, 0.6842105263157895],
                  [0.24726687371730804, 0.8421052631578947]],
        "eval": [[0.039495546370744705, 0.9230769230769231, 5], [0.019823981449007988, 1.0, 5],
                 [0.01097137201577425, 1.0, 5]],
        "loss": 0.0318136103451252, "acc": 1.0,
        "first_row": [-1.3135532140731812, 0.892401397228241], "column_sums": [1.5973560810089111, -6.615026473999023]},
    1: {"train": [[0.3055271506309509, 0.7894736842105263], [0.13614068925380707, 0.8947368421052632],
                  [0.07507260888814926, 1.0]],
        "eval": [[0.3989245593547821, 0.9230769230769231, 5], [0.18643486499786377, 1.0, 5],
                 [0.052329521626234055, 1.0, 5]],
        "loss": 0.05264069512486458, "acc": 1.0,
        "first_row": [1.6514722108840942, -2.6462106704711914], "column_sums": [9.929105758666992, -16.46942901611328]},
}
PADDLE_2_RANKS_WEIGHT_SUMS = {"fc1.weight": -3.365038448944688, "fc1.bias": 0.7439809069037437,
                              "fc2.weight": -1.3018037769943476, "fc2.bias": -0.2791537716984749}


def main():
    import pycoll
    import pycoll.distributed as dist

    got = train(pycoll)
    rank = dist.get_rank()
    assert dist.get_world_size() == 2
    want = PADDLE_2_RANKS[rank]
    np.testing.assert_allclose(np.array(got["train"]), want["train"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(got["eval"]), want["eval"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose([got["loss"], got["acc"]], [want["loss"], want["acc"]], rtol=2e-5, atol=1e-6)
    predicted = got["predicted"]
    assert predicted.shape == (7, 2), predicted.shape  # this rank's share, padded: 13 -> 2 x 7
    np.testing.assert_allclose(predicted[0], want["first_row"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(predicted.sum(0), want["column_sums"], rtol=1e-5, atol=1e-5)
    sums = {k: float(v.sum()) for k, v in got["weights"].items()}
    np.testing.assert_allclose([sums[k] for k in sorted(sums)],
                               [PADDLE_2_RANKS_WEIGHT_SUMS[k] for k in sorted(sums)], rtol=1e-5, atol=1e-5)
    # the weights stayed equal across ranks, and the evaluation's accuracy is the whole set's
    everyone = []
    dist.all_gather_object(everyone, got["weights"])
    for name, value in everyone[1].items():
        np.testing.assert_array_equal(value, everyone[0][name])
    test_set = got["test_set"]
    with pycoll.no_grad():
        logits = got["net"](pycoll.to_tensor(test_set.x)).numpy()
    whole = float((logits.argmax(1) == test_set.y[:, 0]).mean())
    np.testing.assert_allclose(got["acc"], whole)
    # the ranks' evaluation losses differ (each rank's own): EarlyStopping and ReduceLROnPlateau
    # decide on rank 0's, so the ranks stop together and keep one learning rate. Rank 0's loss
    # stops improving by 0.05 at the second evaluation, rank 1's does not
    stopper = pycoll.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=0.05, verbose=0,
                                             save_best_model=False)
    plateau = pycoll.callbacks.ReduceLROnPlateau(monitor="loss", patience=1, min_delta=0.05, factor=0.5, verbose=0)
    again = train(pycoll, [stopper, plateau])
    assert len(again["train"]) == 2 and stopper.wait_epoch == 1, (again["train"], stopper.wait_epoch)
    assert again["model"]._optimizer.get_lr() == 0.025
    # fit returns on every rank once rank 0 has written the final checkpoint, ready to load
    where = [tempfile.mkdtemp() if rank == 0 else None]
    dist.broadcast_object_list(where, src=0)
    again["model"].fit(test_set, batch_size=4, epochs=1, verbose=0, save_dir=where[0])
    assert os.path.exists(os.path.join(where[0], "final.pdparams")), os.listdir(where[0])
    dist.barrier()
    if rank == 0:
        shutil.rmtree(where[0])
    iterable_datasets_give_each_rank_what_they_yield(rank)
    print(f"hapi OK rank={rank}", flush=True)


def iterable_datasets_give_each_rank_what_they_yield(rank):
    """An IterableDataset sharded by rank in __iter__ (paddle refuses one): fit trains on it and
    evaluate's accuracy is over both ranks' samples, none dropped as padding."""
    import pycoll
    import pycoll.distributed as dist

    test_set = pairs_class(pycoll)(12, 4)

    class Mine(pycoll.io.IterableDataset):
        def __iter__(self):
            for i in range(rank, 12, 2):
                yield test_set[i]

    net = pycoll.nn.Linear(4, 2)
    model = pycoll.Model(net)
    model.prepare(pycoll.optimizer.SGD(0.1, parameters=model.parameters()), pycoll.nn.CrossEntropyLoss(),
                  pycoll.metric.Accuracy())
    model.fit(Mine(), batch_size=3, epochs=1, verbose=0)
    acc = model.evaluate(Mine(), batch_size=3, verbose=0)["acc"]
    with pycoll.no_grad():
        whole = float((net(pycoll.to_tensor(test_set.x)).numpy().argmax(1) == test_set.y[:, 0]).mean())
    np.testing.assert_allclose(acc, whole)
    dist.barrier()


if __name__ == "__main__":
    main()
    sys.exit(0)
