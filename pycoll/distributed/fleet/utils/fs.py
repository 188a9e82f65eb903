"""paddle's ``fleet.utils`` file-system clients: ``LocalFS`` (the local file system behind
paddle's FS interface, which checkpointing code writes through) and ``HDFSClient``, which pycoll
does not provide."""
from __future__ import annotations

import os
import shutil
from typing import Any, List, Tuple


class FSFileExistsError(FileExistsError):
    """paddle's: the path is already there."""


class FSFileNotExistsError(FileNotFoundError):
    """paddle's: the path is not there."""


class ExecuteError(Exception):
    """paddle's: a file-system shell command failed. Its HDFS client raises these three; pycoll
    runs no such commands, and has them for the ``except`` clauses of code written for paddle."""


class FSTimeOut(Exception):
    """paddle's: a file-system command ran out of time (see :class:`ExecuteError`)."""


class FSShellCmdAborted(ExecuteError):
    """paddle's: a file-system shell command was aborted (see :class:`ExecuteError`)."""


class LocalFS:
    """The local file system with paddle's FS methods. ``upload`` / ``download`` copy between
    two local paths (a remote file system would move them); ``need_upload_download()`` is False,
    as in paddle."""

    def ls_dir(self, fs_path: str) -> Tuple[List[str], List[str]]:
        """(subdirectories, files) directly under ``fs_path``; two empty lists when it is not there."""
        if not self.is_exist(fs_path):
            return [], []
        dirs, files = [], []
        for name in os.listdir(fs_path):
            (dirs if os.path.isdir(os.path.join(fs_path, name)) else files).append(name)
        return dirs, files

    def list_dirs(self, fs_path: str) -> List[str]:
        """The subdirectories directly under ``fs_path`` (none when it is not there)."""
        return self.ls_dir(fs_path)[0]

    def mkdirs(self, fs_path: str) -> None:
        """Create the directory and its parents (nothing when it is there)."""
        if os.path.isfile(fs_path):
            raise FSFileExistsError(f"LocalFS.mkdirs: {fs_path!r} is already a file")
        os.makedirs(fs_path, exist_ok=True)

    def rename(self, fs_src_path: str, fs_dst_path: str) -> None:
        os.rename(fs_src_path, fs_dst_path)

    def delete(self, fs_path: str) -> None:
        """Remove a file or a whole directory (nothing when it is not there)."""
        if os.path.isfile(fs_path) or os.path.islink(fs_path):
            os.remove(fs_path)
        elif os.path.isdir(fs_path):
            shutil.rmtree(fs_path)

    def need_upload_download(self) -> bool:
        return False

    def is_file(self, fs_path: str) -> bool:
        return os.path.isfile(fs_path)

    def is_dir(self, fs_path: str) -> bool:
        return os.path.isdir(fs_path)

    def is_exist(self, fs_path: str) -> bool:
        return os.path.exists(fs_path)

    def touch(self, fs_path: str, exist_ok: bool = True) -> None:
        """Create an empty file; one already there is left as it is, or refused without ``exist_ok``."""
        if self.is_exist(fs_path):
            if exist_ok:
                return
            raise FSFileExistsError(f"LocalFS.touch: {fs_path!r} exists and exist_ok is False")
        with open(fs_path, "a"):
            pass

    def mv(self, src_path: str, dst_path: str, overwrite: bool = False, test_exists: bool = False) -> None:
        """Move a file or directory; an existing ``dst_path`` is replaced with ``overwrite``, else refused."""
        if not self.is_exist(src_path):
            raise FSFileNotExistsError(f"LocalFS.mv: src_path {src_path!r} does not exist")
        if overwrite:
            self.delete(dst_path)
        if self.is_exist(dst_path):
            raise FSFileExistsError(f"LocalFS.mv: dst_path {dst_path!r} exists; pass overwrite=True to replace it")
        self.rename(src_path, dst_path)

    def upload(self, local_path: str, fs_path: str) -> None:
        """Copy the file or directory ``local_path`` to ``fs_path``."""
        _copy("upload", local_path, fs_path)

    def download(self, fs_path: str, local_path: str) -> None:
        """Copy the file or directory ``fs_path`` to ``local_path``."""
        _copy("download", fs_path, local_path)


def _copy(fn: str, src: str, dst: str) -> None:
    if not os.path.exists(src):
        raise FSFileNotExistsError(f"LocalFS.{fn}: {src!r} does not exist")
    if os.path.isdir(src):
        shutil.copytree(src, dst)
    else:
        shutil.copy2(src, dst)


class HDFSClient:
    """paddle's HDFS client: not in pycoll. Refused at construction, so that a job needing HDFS
    stops before it trains."""

    def __init__(self, hadoop_home: str, configs: Any, time_out: int = 5 * 60 * 1000,
                 sleep_inter: int = 1000) -> None:
        raise NotImplementedError("fleet.utils.HDFSClient: pycoll does not support HDFS; copy the data to a local "
                                  "or mounted path and use fleet.utils.LocalFS")
