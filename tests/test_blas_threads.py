"""NumPy's BLAS computes on paddle's one math thread after ``import pycoll`` unless a threading
variable chose otherwise, and ``set_flags({'FLAGS_paddle_num_threads': n})`` sets n (paddle's flag
for its math library). Each case runs in a fresh interpreter, whose environment it controls;
threadpoolctl (scikit-learn's, in the test install) reads OpenBLAS's thread count back."""
import os
import subprocess
import sys

import pytest

READ = ("import threadpoolctl\n"
        "def blas():  # the thread counts of the OpenBLAS libraries loaded (NumPy's, SciPy's), as one word\n"
        "    return sorted({p['num_threads'] for p in threadpoolctl.threadpool_info() if p['internal_api'] == 'openblas'})\n")


def _run(code, **env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(env_changes)
    result = subprocess.run([sys.executable, "-c", READ + code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()


def test_import_gives_numpys_blas_paddles_one_thread_and_the_flag_sets_more():
    before, after, flagged = _run("import numpy\nb = blas()\nimport pycoll\na = blas()\n"
                                  "pycoll.set_flags({'FLAGS_paddle_num_threads': 2})\n"
                                  "print(b, a, blas(), sep='|')\n")[0].replace(" ", "").split("|")
    if before == "[]":
        pytest.skip("NumPy's BLAS here is not OpenBLAS")  # (the wheel's is: this runs on CI)
    assert after == "[1]" and flagged == "[2]", (before, after, flagged)


def test_a_threading_variable_the_user_set_is_left_alone():
    assert _run("import pycoll\nprint(blas())\n", OPENBLAS_NUM_THREADS="2") == ["[2]"]  # every library's 2
