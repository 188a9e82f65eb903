"""pycoll.utils' try_import, deprecated and require_version against paddle 3.3.1's
(messages and outcomes observed running the same calls on paddle's CPU build, /tmp/h6/dep.py)."""
import json
import sys
import warnings

import numpy as np
import pytest

import pycoll
from pycoll.utils import deprecated, require_version, try_import
from pycoll.utils.deprecated import VisibleDeprecationWarning
from pycoll.utils.version_check import VersionError


def test_try_import_returns_the_module_or_names_the_package(monkeypatch):
    assert try_import("json") is json
    monkeypatch.setitem(sys.modules, "cv2", None)  # import cv2 fails, whether or not OpenCV is installed
    # paddle: the same message, naming paddle where this names pycoll
    with pytest.raises(ImportError, match=r"Failed importing cv2\. .*`pip install opencv-python`\)\. $"):
        try_import("cv2")
    with pytest.raises(ImportError, match=r"^Failed importing foo_missing\.bar\. .*`pip install foo_missing`\)\. $"):
        try_import("foo_missing.bar")
    with pytest.raises(ImportError, match="^custom msg$"):
        try_import("foo_missing", "custom msg")
    with pytest.raises(TypeError, match="module_name"):
        try_import(3)


def test_deprecated_warns_raises_and_notes_the_docstring():
    @deprecated(update_to="pycoll.new_api", since="2.0.0", reason="old and slow", level=1)
    def old(x):
        """Old doc."""
        return x + 1

    msg = ('API "test_utils_helpers.old" is deprecated since 2.0.0, and will be removed in future versions. '
           'Please use "pycoll.new_api" instead.\n    Reason: old and slow')
    # paddle: the docstring gains this notice and the call warns VisibleDeprecationWarning (a UserWarning)
    # with the notice in yellow, pointing at the caller
    assert old.__doc__ == "\n\nWarning:\n    " + msg + "\n\nOld doc."
    with pytest.warns(VisibleDeprecationWarning) as caught:
        assert old(1) == 2
    assert str(caught[0].message) == f"\033[93m\nWarning:\n{msg} \033[0m"
    assert caught[0].filename == __file__ and issubclass(VisibleDeprecationWarning, UserWarning)

    @deprecated(since="9.0", level=1)
    def future():
        return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert future() == 1  # paddle: no warning before the `since` version

    @deprecated(level=2)
    def gone():
        return 1

    with pytest.raises(RuntimeError, match='API "test_utils_helpers.gone" has been deprecated.'):
        gone()

    def plain():
        """doc0"""

    assert deprecated()(plain) is plain  # level 0: only the docstring changes
    assert plain.__doc__ == ('\n\nWarning:\n    API "test_utils_helpers.plain" is deprecated, and will be removed '
                             'in future versions.\n\ndoc0')


def test_deprecated_class_stays_a_class_and_bad_arguments_are_named():
    @deprecated(level=1)
    class Old:
        def __init__(self, value):
            self.value = value

    with pytest.warns(VisibleDeprecationWarning, match='API "test_utils_helpers.Old" is deprecated'):
        obj = Old(3)
    assert isinstance(obj, Old) and obj.value == 3  # paddle turns the class into a function
    with pytest.raises(ValueError, match='update_to must start with "pycoll."'):
        deprecated(update_to="numpy.x")
    with pytest.raises(ValueError, match="level must be 0, 1 or 2, got 3"):
        deprecated(level=3)
    with pytest.raises(TypeError, match="since must be a str, got int"):
        deprecated(since=2)


def test_require_version_against_the_paddle_version_pycoll_follows():
    # paddle 3.3.1: these pass (return None) ...
    assert require_version("2.0") is None
    assert require_version("3.3.1", "3.3.1") is None
    assert require_version("0.1.0", "10.0.0") is None
    # ... these raise, with these messages but for the last clause
    with pytest.raises(VersionError, match=r"^VersionError: PaddlePaddle version 3\.4 or higher required"):
        require_version("3.4")
    with pytest.raises(Exception, match=r"^VersionError: PaddlePaddle version in \[1\.0, 3\.3\.0\] required"):
        require_version("1.0", "3.3.0")
    with pytest.raises(TypeError, match="min_version must be a str, got int"):
        require_version(3)
    with pytest.raises(TypeError, match="max_version must be a str, got int"):
        require_version("1.0", 2)
    for bad in ("1.x", "1.0.0.0.0"):
        with pytest.raises(ValueError, match="min_version must be in format"):
            require_version(bad)
    assert pycoll.utils.require_version is require_version


def test_hapi_dynamic_flops_counts_as_pycoll_flops(capsys):
    import pycoll.nn as nn
    from pycoll.hapi import dynamic_flops as df

    net = nn.Sequential(nn.Conv2D(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2D(2), nn.Flatten(), nn.Linear(32, 5))
    # by hand, paddle's rules (paddle 3.3.1's own flops fails on NumPy 2 here: int() of a 1-element array):
    # conv 2*8*6*6 outputs x (3*9 + 1) = 16128; adaptive pool 2*8*2*2 x (3*3 + 1) = 640; linear 32 x 2*5 = 320
    assert df.dynamic_flops(net, pycoll.randn([2, 3, 8, 8])) == 16128 + 640 + 320
    assert pycoll.hapi.dynamic_flops is df and pycoll.hapi.logger.setup_logger  # attributes, as paddle's
    assert "Total Flops: 17088" in capsys.readouterr().out
    assert df.register_hooks[nn.Conv2D] is df.count_convNd and df.register_hooks[nn.Linear] is df.count_linear
    assert df.flops is pycoll.flops
    with pytest.raises(TypeError, match="inputs must be a tensor"):
        df.dynamic_flops(net, [2, 3, 8, 8])


def test_hapi_progressbar_and_logger(tmp_path, capsys):
    from pycoll.hapi.logger import setup_logger
    from pycoll.hapi.progress import ProgressBar
    from pycoll.hapi.progressbar import ProgressBar as Bar

    assert Bar is ProgressBar
    log = setup_logger(output=str(tmp_path / "logs"), name="pycoll_hapi_test", log_level="DEBUG")
    try:
        # paddle: propagate False, a stdout StreamHandler with this format, at the given level
        assert log.name == "pycoll_hapi_test" and not log.propagate and log.level == 10
        assert log.handlers[0].formatter._fmt == "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
        log.debug("hello")
        assert capsys.readouterr().out.endswith(" - pycoll_hapi_test - DEBUG - hello\n")
        assert (tmp_path / "logs" / "log.txt").read_text().endswith(" - pycoll_hapi_test - DEBUG - hello\n")
        assert len(setup_logger(name="pycoll_hapi_test").handlers) == 2  # the stdout handler is added once
    finally:
        for handler in list(log.handlers):
            handler.close()
            log.removeHandler(handler)


def test_nested_structure_helpers_follow_paddles_layers_utils():
    """paddle 3.3.1's values: a dict's leaves by sorted keys, a string or an array a leaf."""
    import collections

    from pycoll import utils
    assert utils.flatten({"b": [1, (2, 3)], "a": 4}) == [4, 1, 2, 3]
    assert utils.pack_sequence_as({"b": [0, (0, 0)], "a": 0}, [10, 20, 30, 40]) == {"b": [20, (30, 40)], "a": 10}
    assert utils.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert [utils.is_sequence(v) for v in ({"a": 1}, "ab", None, np.zeros(2), (1,))] == [True, False, False, False, True]
    pair = collections.namedtuple("pair", "x y")
    assert utils.map_structure(lambda v: v * 2, pair(1, [2])) == pair(2, [4])
    with pytest.raises(ValueError, match=r"structure\[0\]\[1\] is a tuple of 2, structure\[1\]\[1\] a leaf"):
        utils.map_structure(lambda a, b: a, [1, (2, 3)], [1, 2])
    with pytest.raises(ValueError, match="structure has 3 elements, but flat_sequence has 2"):
        utils.pack_sequence_as([1, [2, 3]], [1, 2])


def test_paddles_other_structure_helpers():
    # paddle.utils has them outside its __all__; decoding code copied from paddle's nn/decode.py uses them
    from pycoll import utils

    utils.assert_same_structure([1, (2, {"k": 3})], [4, (5, {"k": 6})])
    with pytest.raises(TypeError, match=r"nest1\[1\] is a tuple, nest2\[1\] a list"):
        utils.assert_same_structure([1, (2, 3)], [4, [5, 6]])
    utils.assert_same_structure([1, (2, 3)], [4, [5, 6]], check_types=False)
    with pytest.raises(ValueError, match=r"nest1\[1\] is a tuple of 2, nest2\[1\] a leaf \(int\)"):
        utils.assert_same_structure([1, (2, 3)], [4, 5])
    assert utils.to_sequence(3) == [3] and utils.to_sequence((3,)) == (3,)
    assert utils.hold_mutable_vars([1, [2]]) and not utils.hold_mutable_vars([1, 2])
    held = [7]
    copied = utils.copy_mutable_vars({"a": held, "b": (1, 2)})
    assert copied == {"a": [7], "b": (1, 2)} and copied["a"] is not held
