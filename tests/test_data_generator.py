"""fleet.MultiSlotDataGenerator / MultiSlotStringDataGenerator: the text they write is byte for
byte paddle 3.3.1's for the same samples (written below as paddle's generators printed it), and
a generator script as an InMemoryDataset's pipe_command gives the batches of its samples."""
import io
import sys

import numpy as np
import pytest

import pycoll.distributed as dist
from pycoll.distributed import fleet
from pycoll.distributed.dataset import Slot

RAW = "1 2 3\n40 5\n\n7 8 9 10 11\n12\n6 6 6 6\n3 1\n"


class Ints(fleet.MultiSlotDataGenerator):
    """Two samples per raw line (the second from a zip), a None for an empty line; batches of
    ``set_batch`` padded to their longest ``words``."""

    def generate_sample(self, line):
        def it():
            if line is None:  # run_from_memory
                for i in range(5):
                    yield [("ids", [i, i * 7, 2 ** 40 + i]), ("w", [0.5 * i, 1e-7, 1e20, -0.0, 1 / 3]),
                           ("flag", [True, i])]
                return
            words = line.split()
            if not words:
                yield None
                return
            ids = [int(w) for w in words]
            yield (("words", ids), ("label", [ids[0] % 2]), ("score", [ids[-1] / 7 if len(ids) > 2 else ids[-1]]))
            yield zip(["words", "label", "score"], [ids[:1], [1], [0.25]])
        return it

    def generate_batch(self, samples):
        samples = [list(s) for s in samples]

        def pad():
            longest = max(len(s[0][1]) for s in samples)
            for s in samples:
                s[0] = (s[0][0], s[0][1] + [0] * (longest - len(s[0][1])))
                yield s
        return pad


class Strs(fleet.MultiSlotStringDataGenerator):
    def generate_sample(self, line):
        def it():
            words = line.split()
            yield [("words", words), ("first", words[:1]), ("none", [])]
        return it


# what paddle 3.3.1's generators wrote for these classes (its CPU build, same input)
PADDLE_INTS = ("3 1 2 3 1 1 1 0.42857142857142855\n3 1 0 0 1 1 1 0.25\n3 40 5 0 1 0 1 5\n5 40 0 0 0 0 1 1 1 0.25\n"
               "5 7 8 9 10 11 1 1 1 1.5714285714285714\n5 7 0 0 0 0 1 1 1 0.25\n4 12 0 0 0 1 0 1 12\n"
               "4 12 0 0 0 1 1 1 0.25\n4 6 6 6 6 1 0 1 0.8571428571428571\n2 6 0 1 1 1 0.25\n2 3 1 1 1 1 1\n"
               "2 3 0 1 1 1 0.25\n")
PADDLE_MEMORY = "".join(f"3 {i} {i * 7} {2 ** 40 + i} 5 {0.5 * i} 1e-07 1e+20 -0.0 0.3333333333333333 2 True {i}\n"
                        for i in range(5))
PADDLE_STRS = "3 1 2 3 1 1 0\n2 40 5 1 40 0\n0 0 0\n5 7 8 9 10 11 1 7 0\n1 12 1 12 0\n4 6 6 6 6 1 6 0\n2 3 1 1 3 0\n"


def run(generator, method, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(RAW))
    getattr(generator, method)()
    return capsys.readouterr().out


def test_text_is_paddles_byte_for_byte(monkeypatch, capsys):
    ints = Ints()
    ints.set_batch(3)
    assert run(ints, "run_from_stdin", monkeypatch, capsys) == PADDLE_INTS
    assert ints._proto_info == [("words", "uint64"), ("label", "uint64"), ("score", "float")]
    memory = Ints()
    memory.set_batch(2)
    assert run(memory, "run_from_memory", monkeypatch, capsys) == PADDLE_MEMORY
    assert run(Strs(), "run_from_stdin", monkeypatch, capsys) == PADDLE_STRS


# samples paddle 3.3.1's MultiSlotDataGenerator refuses (ValueError), one after the other
REFUSED = [
    [[("a", [1])], [("a", [1]), ("b", [2])]],  # another slot count than the first sample's
    [[("a", [1])], [("b", [1])]],  # another slot name
    [[("a", (1, 2))]],  # values not in a list
    [[("a", [])]],  # an empty slot
    [[("a", [np.int64(3)])]],  # neither int nor float
    [[(1, [3])]],  # a name that is not a str
    [("a", [1])],  # a sample that is not a list of slots
    ["a 1"],
]


@pytest.mark.parametrize("samples", REFUSED)
def test_refused_samples_as_paddle(samples):
    generator = fleet.MultiSlotDataGenerator()
    with pytest.raises(ValueError):
        for sample in samples:
            generator._gen_str(sample)


def test_string_generator_refuses_what_paddle_refuses():
    strings = fleet.MultiSlotStringDataGenerator()
    assert strings._gen_str((("a", ["x", "y"]), ("b", []))) == "2 x y 0\n"
    with pytest.raises(ValueError, match="list or tuple"):
        strings._gen_str("ab")
    with pytest.raises(TypeError):  # paddle's too: values must be strings
        strings._gen_str([("a", [1])])


GEN_SCRIPT = """
from pycoll.distributed import fleet


class Words(fleet.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def sample():
            ids = [int(w) for w in line.split()]
            yield ("words", ids), ("label", [ids[0] % 2]), ("weight", [len(ids) / 4])
        return sample


Words().run_from_stdin()
"""


def test_in_memory_dataset_reads_through_a_generator_script(tmp_path):
    (tmp_path / "gen.py").write_text(GEN_SCRIPT)
    raw = tmp_path / "part-0"
    raw.write_text("5 1 4\n2\n9 9\n3 8 6 7\n")
    dataset = dist.InMemoryDataset()
    dataset.init(batch_size=3, use_var=[Slot("words", "int64"), Slot("label", "int64"), Slot("weight", "float32")],
                 pipe_command=f"{sys.executable} {tmp_path / 'gen.py'}")
    dataset.set_filelist([str(raw)])
    dataset.load_into_memory()
    assert dataset.get_memory_data_size() == 4
    first, second = list(dataset)
    # the samples by hand: words = the line's ints, label = the first % 2, weight = count / 4
    np.testing.assert_array_equal(first["words"].numpy(), [[5, 1, 4], [2, 0, 0], [9, 9, 0]])
    np.testing.assert_array_equal(first["words.lengths"].numpy(), [3, 1, 2])
    np.testing.assert_array_equal(first["label"].numpy(), [[1], [0], [1]])
    np.testing.assert_array_equal(first["weight"].numpy(), np.array([[0.75], [0.25], [0.5]], np.float32))
    np.testing.assert_array_equal(second["words"].numpy(), [[3, 8, 6, 7]])
    np.testing.assert_array_equal(second["label"].numpy(), [[1]])
    np.testing.assert_array_equal(second["weight"].numpy(), np.array([[1.0]], np.float32))
