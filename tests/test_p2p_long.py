"""A point-to-point message longer than its receive buffer, on MPI without PYCOLL_CHECK: every
receive form (recv, irecv, batch_isend_irecv) raises a clean CollectiveError naming the buffer's
size, the message is consumed and the job goes on and exits 0 (tests/ranks/p2p_long.py). Before,
MPI's truncation error surfaced as an engine failure that marked MPI broken and made the job
exit 1 at the end although the script caught it."""
from conftest import assert_ok, launch


def test_a_message_longer_than_the_buffer_raises_and_the_job_goes_on_to_exit_0():
    result = launch(2, "p2p_long.py", timeout=60)
    assert_ok(result)
    output = result.stdout + result.stderr
    assert output.count("p2p_long.py OK rank=") == 2, output
    assert "Message truncated" not in output, output
