"""pycoll.distributed.dataset: the MultiSlot format, InMemoryDataset and QueueDataset in one
process (parsing, errors naming file and line, pipe_command, slots_shuffle), and the global
shuffle on 2, 3 and 4 ranks (tests/ranks/dataset_shuffle.py)."""
import pytest

import pycoll
from conftest import assert_ok, launch
from pycoll.distributed.dataset import InMemoryDataset, QueueDataset, Slot
from pycoll.distributed.dataset.slots import as_slots

SLOTS = [Slot("click", "int64"), ("feat", "float32", 1)]


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1 0 2 0.5 1.5\n1 1 1 3.5\n")
    b.write_text("1 2 1 2.5\n")
    return [str(a), str(b)]


def dataset(kind, files, **settings):
    data = kind()
    data.init(batch_size=2, use_var=SLOTS, **settings)
    data.set_filelist(files)
    return data


def test_records_come_out_as_padded_batches_with_lengths(files):
    data = dataset(InMemoryDataset, files)
    data.load_into_memory()
    batches = list(data)
    assert [b["click"].numpy().ravel().tolist() for b in batches] == [[0, 1], [2]]
    assert batches[0]["feat"].numpy().tolist() == [[0.5, 1.5], [3.5, 0.0]]
    assert batches[0]["feat.lengths"].numpy().tolist() == [2, 1]
    streamed = list(dataset(QueueDataset, files))
    assert [b["click"].numpy().ravel().tolist() for b in streamed] == [[0, 1], [2]]


def test_pipe_command_feeds_each_file_through_the_shell(files):
    data = dataset(InMemoryDataset, files, pipe_command="sed 's/^1 2 /1 9 /'")
    data.load_into_memory()
    assert sorted(b for batch in data for b in batch["click"].numpy().ravel().tolist()) == [0, 1, 9]


@pytest.mark.parametrize("text, words", [
    ("1 0 3 0.5\n", ["bad.txt:1", "slot 'feat' says 3 values but the line has 1 left"]),
    ("1 0 1 0.5\n1 x 0\n", ["bad.txt:2", "slot 'click': a value is not a number of dtype int64"]),
    ("1 0\n", ["bad.txt:1", "slot 'feat' is missing"]),
    ("one 0 0\n", ["bad.txt:1", "the count b'one' is not an integer"]),
    ("1 0 0\n", ["bad.txt:1", "slot 'feat' has 0 values", "pad it in the data generator"]),  # paddle's rule
    ("1 99999999999999999999 1 0.5\n", ["bad.txt:1", "slot 'click': a value is not a number of dtype int64"]),
])
def test_a_malformed_line_is_named_by_file_and_line(tmp_path, text, words):
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    with pytest.raises(ValueError) as info:
        dataset(InMemoryDataset, [str(bad)]).load_into_memory()
    for word in words:
        assert word in str(info.value), info.value


def test_missing_files_empty_lists_and_bad_slots_are_refused(tmp_path, files):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        dataset(InMemoryDataset, [str(tmp_path / "nope.txt")]).load_into_memory()
    with pytest.raises(ValueError, match="the file list is empty"):
        dataset(InMemoryDataset, []).load_into_memory()
    with pytest.raises(ValueError, match="use_var\\[0\\]"):
        InMemoryDataset().init(use_var=[("x", "int8")])
    data = dataset(InMemoryDataset, files)
    data.preload_into_memory()
    data.wait_preload_done()
    assert data.get_memory_data_size() == 3
    with pytest.raises(ValueError, match="no slot named \\['nope'\\]"):
        data.slots_shuffle(["nope"])


def test_slots_shuffle_permutes_one_slot_across_records(tmp_path):
    source = tmp_path / "fifty.txt"
    source.write_text("".join(f"1 {i} 1 {i}\n" for i in range(50)))  # feat = click, at first
    data = dataset(InMemoryDataset, [str(source)])
    data.load_into_memory()
    pycoll.seed(3)
    data.slots_shuffle(["feat"])
    pairs = [(c, f) for b in data for c, f in zip(b["click"].numpy().ravel().tolist(),
                                                   b["feat"].numpy().ravel().tolist())]
    assert [c for c, _ in pairs] == list(range(50)), "the other slots stay with their records"
    assert sorted(f for _, f in pairs) == list(range(50)), "the slot's values are permuted, none lost"
    assert sum(c != f for c, f in pairs) > 40


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_the_global_shuffle_moves_every_record_once(nprocs, tmp_path):
    assert_ok(launch(nprocs, "dataset_shuffle.py", str(tmp_path), timeout=120), expect_lines=nprocs)


def test_files_are_read_and_checked_in_blocks_across_their_boundaries(tmp_path, monkeypatch):
    from pycoll.distributed.dataset import datasets

    monkeypatch.setattr(datasets, "READ_BYTES", 16)  # blocks end mid-line, most lines span blocks
    source = tmp_path / "many.txt"
    lines = [f"2 {i} {i + 1} 1 {i / 4:g}" for i in range(40)]
    source.write_text("\n".join(lines[:20]) + "\n\n  \n" + "\n".join(lines[20:]))  # blanks; no final newline
    for pipe_command in ("cat", "cat -"):
        data = dataset(InMemoryDataset, [str(source)], pipe_command=pipe_command)
        data.load_into_memory()
        assert data._records == [line.encode() for line in lines]
    source.write_text("\n".join(lines[:30]) + "\n1 0 1 zero\n" + "\n".join(lines[30:]) + "\n")
    with pytest.raises(ValueError, match="many.txt:31: slot 'feat': a value is not a number"):
        dataset(InMemoryDataset, [str(source)]).load_into_memory()
    source.write_text("\n".join(lines) + "\n1 99999999999999999999 1 0.5\n")
    with pytest.raises(ValueError, match="many.txt:41: slot 'click': a value is not a number"):
        dataset(InMemoryDataset, [str(source)]).load_into_memory()


def test_feature_ids_read_as_paddle_reads_them(tmp_path):
    """Hashed ids of 2**63 and more (paddle reads uint64) keep their bits as int64; paddle's
    parse_ins_id/parse_content fields open a line and are read past; merge_size is refused."""
    source = tmp_path / "ids.txt"
    source.write_text("1 18446744073709551615 1 0.5\n1 9223372036854775808 1 1.5\n1 7 1 2.5\n")
    data = dataset(InMemoryDataset, [str(source)])
    data.load_into_memory()
    clicks = [c for b in data for c in b["click"].numpy().ravel().tolist()]
    assert clicks == [-1, -2 ** 63, 7]
    source.write_text("1 ins_a 1 page_1 1 5 1 0.5\n1 ins_b 1 page_2 1 6 1 1.5\n")
    for kind in (InMemoryDataset, QueueDataset):
        data = dataset(kind, [str(source)])
        data._init_distributed_settings(parse_ins_id=True, parse_content=True)
        if kind is InMemoryDataset:
            data.load_into_memory()
        assert [c for b in data for c in b["click"].numpy().ravel().tolist()] == [5, 6]
    data = dataset(InMemoryDataset, [str(source)])
    data._init_distributed_settings(parse_ins_id=True)
    with pytest.raises(ValueError, match="ids.txt:1: slot .click.: a value is not a number"):
        data.load_into_memory()  # the content field is not read past unless parse_content
    source.write_text("5 1 0.5\n")
    with pytest.raises(ValueError, match="with parse_ins_id=True a line starts with '1 <value>'"):
        data.load_into_memory()
    with pytest.raises(NotImplementedError, match="merge_size=2"):
        data._init_distributed_settings(merge_size=2)


def test_global_shuffle_chunks_are_greedy_runs_under_the_bound(monkeypatch):
    from pycoll.distributed.dataset import datasets

    monkeypatch.setattr(datasets, "CHUNK_BYTES", 20)
    lines = [b"x" * n for n in (3, 5, 30, 1, 1, 18, 2, 9, 9, 0, 7)]
    chunks = datasets._chunks(lines)
    assert [line for chunk in chunks for line in chunk] == lines
    assert [len(c) for c in chunks] == [2, 1, 2, 1, 2, 3]
    for chunk, following in zip(chunks, chunks[1:] + [[]]):
        size = sum(len(line) + 1 for line in chunk)
        assert size <= 20 or len(chunk) == 1
        assert not following or size + len(following[0]) + 1 > 20, "a chunk takes every line that fits"
    assert datasets._chunks([]) == []


def test_paddles_static_data_describes_a_slot():
    pycoll.enable_static()  # paddle's dataset scripts call it; pycoll stays eager
    assert pycoll.in_dynamic_mode()
    spec = pycoll.static.data(name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    assert as_slots([spec]) == [Slot("ids", "int64", 1)]
    assert as_slots([pycoll.static.data("x", [-1, 4])])[0].dtype == "float32"
