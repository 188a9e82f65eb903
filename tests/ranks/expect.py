"""The rank workers' check that a call fails as it should: its exception type, and words its
message must hold."""


def expect(exc_type, words, fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``; it must raise ``exc_type`` with every one of ``words``."""
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        for word in words:
            assert word in str(exc), f"{word!r} not in {exc}"
        return
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args} did not raise {exc_type.__name__} "
                         f"(expected one naming {list(words)})")
