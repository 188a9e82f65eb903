"""The folder a collective save writes into (pycoll.distributed.output_folder), and the savers
that make it on every rank before anything is sent (tests/ranks/save_paths.py)."""
import errno
import os

import pytest

from conftest import assert_ok, launch
from pycoll.distributed.output_folder import make_output_folder


def test_a_missing_folder_is_made_and_its_path_returned_as_a_str(tmp_path):
    target = tmp_path / "a" / "b"
    assert make_output_folder("save", "output", target) == str(target)
    assert target.is_dir()
    assert make_output_folder("save", "output", str(target)) == str(target)  # an existing folder is fine


@pytest.mark.parametrize("kind, error, words", [
    ("file", FileExistsError, ["api: out=", "is a file"]),
    ("unmakeable", FileNotFoundError, ["api: cannot make the folder out='/proc/pycoll_no_such_dir/x'"]),
    ("number", TypeError, ["api: out must be a path", "got int"]),
])
def test_a_bad_folder_is_refused_naming_the_api_and_the_argument(tmp_path, kind, error, words):
    path = {"file": tmp_path / "f", "unmakeable": "/proc/pycoll_no_such_dir/x", "number": 7}[kind]
    if kind == "file":
        path.write_text("")
    with pytest.raises(error) as info:
        make_output_folder("api", "out", path)
    assert all(w in str(info.value) for w in words), info.value
    if kind == "file":
        assert info.value.errno == errno.EEXIST


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_folder_that_cannot_be_written_is_refused(tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="out="):
            make_output_folder("api", "out", tmp_path / "sub")
    finally:
        tmp_path.chmod(0o700)


def test_on_two_ranks_bad_save_folders_raise_on_every_rank_and_the_job_goes_on(tmp_path):
    assert_ok(launch(2, "save_paths.py", str(tmp_path), timeout=120), expect_lines=2)
