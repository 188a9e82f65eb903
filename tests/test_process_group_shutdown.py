"""paddle's shutdown_process_group / restart_process_group on a live 2-rank job (tests/ranks/group_shutdown.py)."""
from conftest import assert_ok, launch


def test_shutdown_refuses_calls_and_restart_gives_right_values():
    assert_ok(launch(2, "group_shutdown.py", timeout=90), expect_lines=2)
