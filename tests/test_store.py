"""The rendezvous store, pycoll.distributed.store (threads and real processes on 127.0.0.1): its
operations, its limits, its token, and a hostile or failing client dropped while others are served."""
import contextlib
import logging
import math
import os
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest


from conftest import free_port, run_children
from pycoll import CollectiveError
from pycoll.distributed._store_server import StoreServer
from pycoll.distributed.store import TCPStore

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent


OK, MISSING, BAD, REFUSED = 0, 1, 2, 3  # reply statuses (the store module's docstring)
TOKEN = "job-7f3a-secret"


@pytest.fixture(autouse=True)
def no_token_from_the_shell(monkeypatch):
    monkeypatch.delenv("PYCOLL_STORE_TOKEN", raising=False)


@pytest.fixture
def master():
    store = TCPStore(HOST, 0, is_master=True, timeout=10)
    yield store
    store.close()


# -- the wire, as an attacker sees it (built by hand from the documented format) -----------------
def request_frame(op, key, arg, token=b""):
    raw_key = key.encode()
    body = op + struct.pack("!H", len(token)) + token + struct.pack("!I", len(raw_key)) + raw_key + arg
    return struct.pack("!I", len(body)) + body


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "the store closed the connection"
        data += chunk
    return data


def read_frame(sock):
    (size,) = struct.unpack("!I", recv_exact(sock, 4))
    body = recv_exact(sock, size)
    return body[0], body[1:]


@contextlib.contextmanager
def raw_client(port, timeout=5):
    """A bare socket past the server's greeting; its reads fail after ``timeout`` s."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        assert read_frame(sock) == (OK, b"")
        yield sock


def assert_closed_by_the_server(sock):
    """Read (and discard) until the server closes ``sock``; a read timeout fails the test."""
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        pass


def thread_cpu_s(thread):
    """CPU seconds ``thread`` (of this process) has used, from /proc."""
    with open(f"/proc/self/task/{thread.native_id}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assert_serves(port, key="probe"):
    with TCPStore(HOST, port, timeout=5) as client:
        client.set(key, b"served")
        assert client.get(key, timeout=5) == b"served"


# -- the store -------------------------------------------------------------------------------
def test_set_get_add_between_threads(master):
    n, errors, seen = 4, [], {}

    def rank(r):
        try:
            with TCPStore(HOST, master.port, timeout=10) as store:
                store.set(f"k{r}", f"value {r}".encode())
                seen[r] = [store.get(f"k{p}") for p in range(n)]  # waits for the later ranks
                store.add("count", r + 1)
                store.barrier(n, "threads")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert all(seen[r] == [f"value {p}".encode() for p in range(n)] for r in range(n))
    assert master.add("count", 0) == sum(range(1, n + 1))
    assert master.get("count") == str(sum(range(1, n + 1))).encode()


def test_get_waits_for_a_later_set(master):
    threading.Timer(0.2, master.set, args=("late", b"here")).start()
    with TCPStore(HOST, master.port, timeout=10) as client:
        assert client.get("late", timeout=5) == b"here"
        client.set("late", b"again")  # replacing a value
        assert master.get("late") == b"again"


def test_wait_names_itself_when_a_key_is_not_set(master):
    master.set("late2", b"x")
    with pytest.raises(CollectiveError, match=r"TCPStore.wait\('never'\): no client set the key within 0.1 s"):
        master.wait(["late2", "never"], timeout=0.1)


def test_values_of_any_size_and_partial_frames(master):
    big = bytes(range(256)) * 40_000  # 10 MB
    master.set("big", big)
    with TCPStore(HOST, master.port, timeout=10) as client:
        assert client.get("big") == big
    # a raw client writing one frame a few bytes at a time: the server reassembles it
    frame = request_frame(b"S", "slow", b"dribbled")
    with raw_client(master.port) as raw:
        for i in range(0, len(frame), 3):
            raw.sendall(frame[i:i + 3])
            time.sleep(0.01)
        assert read_frame(raw) == (OK, b"")
    assert master.get("slow") == b"dribbled"


def test_get_of_a_missing_key_times_out_quickly(master):
    start = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        master.get("never", timeout=0.3)
    assert time.monotonic() - start < 3
    message = str(info.value)
    assert "'never'" in message and f"{HOST}:{master.port}" in message and "0.3 s" in message
    master.set("never", b"now")  # the connection stays in step after a timed-out get
    assert master.get("never", timeout=0.1) == b"now"


def test_barrier_times_out_naming_the_arrivals(master):
    with pytest.raises(CollectiveError, match=r"barrier\('lonely'\): only 1 of 2 ranks arrived within 0.2 s"):
        master.barrier(2, "lonely", timeout=0.2)


def test_barrier_between_real_processes_and_add(master):
    code = """
        import os
        from pycoll.distributed.store import TCPStore
        rank, n = int(os.environ["RANK"]), 3
        with TCPStore("127.0.0.1", int(os.environ["PORT"]), timeout=20) as store:
            store.set(f"proc{rank}", str(os.getpid()).encode())
            total = store.add("hits", 10)
            store.barrier(n, "procs")
            pids = [int(store.get(f"proc{r}")) for r in range(n)]
            assert store.add("hits", 0) == 10 * n, "every add landed before the barrier"
            assert len(set(pids)) == n
        print("OK", rank, total)
    """
    results = run_children(code, 3, master.port)
    for code_, out, err in results:
        assert code_ == 0 and out.startswith("OK"), out + err
    assert master.add("hits", 0) == 30


def test_bad_values_and_keys(master):
    master.set("text", b"not a number")
    with pytest.raises(ValueError, match="not an integer"):
        master.add("text", 1)
    master.set("k", "str")  # as paddle's store: the UTF-8 bytes, given back as bytes
    assert master.get("k") == b"str"
    master.wait(["k", "text"])
    master.wait("k", timeout=0.5)
    with pytest.raises(CollectiveError, match="no client set the key within 0.2 s"):
        master.wait(["k", "never set"], timeout=0.2)
    with pytest.raises(TypeError, match="value must be bytes or str"):
        master.set("k", 3)
    with pytest.raises(TypeError, match="key must be a non-empty str"):
        master.get("")
    with pytest.raises(TypeError, match="amount must be an int"):
        master.add("k", 1.5)
    with pytest.raises(ValueError, match="nranks must be a positive int"):
        master.barrier(0, "t")


def test_bad_address_errors_name_the_variables():
    with pytest.raises(ValueError, match="MASTER_PORT=70000"):
        TCPStore(HOST, 70000, timeout=1)
    with pytest.raises(ValueError, match="MASTER_PORT=0"):
        TCPStore(HOST, 0, timeout=1)  # only the master may ask for an ephemeral port
    with pytest.raises(ValueError, match="MASTER_ADDR=''"):
        TCPStore("", 1234, timeout=1)
    with pytest.raises(ValueError, match="MASTER_ADDR='no such host.invalid' cannot be resolved"):
        TCPStore("no such host.invalid", 1234, timeout=1)


def test_nobody_listening_fails_after_the_timeout():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        TCPStore(HOST, port, timeout=0.5)
    assert time.monotonic() - start < 5
    assert f"MASTER_ADDR:MASTER_PORT = {HOST}:{port}" in str(info.value) and "0.5 s" in str(info.value)


def test_a_port_in_use_cannot_host_a_second_store(master):
    with pytest.raises(CollectiveError, match="cannot host the rendezvous store.*MASTER_PORT"):
        TCPStore(HOST, master.port, is_master=True, timeout=1)


def test_connect_retries_until_the_master_appears():
    port = free_port()
    box = {}

    def late_master():
        time.sleep(0.5)
        box["master"] = TCPStore(HOST, port, is_master=True, timeout=10)
        box["master"].set("ready", b"yes")

    threading.Thread(target=late_master).start()
    with TCPStore(HOST, port, timeout=10) as client:
        assert client.get("ready") == b"yes"
    box["master"].close()


def test_close_stops_the_server(master):
    client = TCPStore(HOST, master.port, timeout=5)
    thread = master._server._thread
    master.close()
    master.close()  # idempotent
    assert not thread.is_alive()
    started = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        client.get("x", timeout=100)
    assert time.monotonic() - started < 5  # the loss is told at once, and no wait is claimed
    assert ("closed the connection, 0.0 s into the request (did rank 0 exit?)" in str(info.value)
            or "reset by peer, 0.0 s into the request" in str(info.value)), info.value
    assert "100" not in str(info.value), info.value
    with pytest.raises(CollectiveError, match="closed"):
        client.get("x", timeout=1)
    client.close()


def test_a_silent_server_is_a_timeout_naming_the_bound(monkeypatch):
    monkeypatch.setattr("pycoll.distributed.store._REPLY_GRACE_S", 0.2)
    listener = socket.create_server((HOST, 0))
    box = []

    def greet_then_say_nothing():
        conn, _ = listener.accept()
        conn.sendall(struct.pack("!IB", 1, OK))
        box.append(conn)

    greeter = threading.Thread(target=greet_then_say_nothing)
    greeter.start()
    client = TCPStore(HOST, listener.getsockname()[1], timeout=5)
    greeter.join()
    started = time.monotonic()
    with pytest.raises(CollectiveError, match=r"get\('k'\) at .*: no reply within 0.5 s \(is rank 0's "):
        client.get("k", timeout=0.3)
    assert 0.4 < time.monotonic() - started < 3
    client.close()
    box[0].close()
    listener.close()


# -- no client can stop, stall or exhaust the server ------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("wait", [math.inf, 3e6, math.nan, -1.0])
def test_a_hostile_wait_neither_stops_nor_spins_the_server(master, wait):
    thread = master._server._thread
    with raw_client(master.port) as raw:
        raw.sendall(request_frame(b"G", "hostile", struct.pack("!d", wait)))
        if not (math.isfinite(wait) and wait >= 0):
            status, why = read_frame(raw)
            assert status == BAD and b"finite" in why, why
        before = thread_cpu_s(thread)
        time.sleep(1.0)
        assert thread_cpu_s(thread) - before < 0.25, "the server thread spins"
        assert thread.is_alive()
        assert_serves(master.port)
        if wait == 3e6:  # a long wait is kept (clamped), and a set answers it
            master.set("hostile", b"now")
            assert read_frame(raw) == (OK, b"now")


@pytest.mark.timeout(60)
def test_a_rendezvous_with_a_huge_timeout_is_served(master):
    got = []
    with TCPStore(HOST, master.port, timeout=3e6) as client:
        waiter = threading.Thread(target=lambda: got.append(client.get("later")))
        waiter.start()
        time.sleep(0.3)
        master.set("later", b"here")
        waiter.join(10)
    assert got == [b"here"]


@pytest.mark.parametrize("bad, error", [
    (math.nan, ValueError), (math.inf, ValueError), (-1, ValueError), ("5", TypeError), (True, TypeError)])
def test_the_client_refuses_bad_timeouts(master, bad, error):
    with pytest.raises(error, match="timeout"):
        master.get("k", timeout=bad)
    with pytest.raises(error, match="timeout"):
        master.barrier(1, "t", timeout=bad)
    with pytest.raises(error, match="timeout"):
        TCPStore(HOST, master.port, timeout=bad)
    assert master.add("pycoll/barrier/t", 0) == 0  # nothing reached the server


@pytest.mark.timeout(60)
def test_an_oversized_frame_is_dropped_and_others_served(master):
    with raw_client(master.port) as raw:  # the default limit is far below the 1 GiB claimed
        raw.sendall(struct.pack("!I", 1 << 30) + b"S" * 4096)
        assert_closed_by_the_server(raw)
    assert_serves(master.port)
    with TCPStore(HOST, 0, is_master=True, timeout=10, max_frame_bytes=1 << 16) as small:
        with raw_client(small.port) as raw:
            raw.sendall(request_frame(b"S", "big", bytes(1 << 16)))
            assert_closed_by_the_server(raw)
        with pytest.raises(ValueError, match="max_frame_bytes=65536"):  # the client checks first
            small.set("big", bytes(1 << 16))
        small.set("fits", bytes(60_000))
        assert small.get("fits") == bytes(60_000)
    with pytest.raises(ValueError, match="max_frame_bytes=12"):
        TCPStore(HOST, 0, is_master=True, timeout=1, max_frame_bytes=12)


@pytest.mark.timeout(60)
def test_a_client_that_never_reads_stalls_nobody():
    with TCPStore(HOST, 0, is_master=True, timeout=10, max_frame_bytes=4 << 20) as master:
        master.set("bulk", bytes(1 << 20))
        with raw_client(master.port, timeout=10) as hog:
            hog.sendall(b"".join(request_frame(b"G", "bulk", struct.pack("!d", 1.0)) for _ in range(64)))
            start = time.monotonic()
            assert_serves(master.port)
            assert time.monotonic() - start < 5, "one client that does not read stalled another"
            # once more than a frame of its replies waits, the hog is dropped
            assert_closed_by_the_server(hog)
        assert_serves(master.port)


@pytest.mark.timeout(60)
def test_a_client_cannot_pile_up_waiters(master):
    with raw_client(master.port) as raw:  # TCPStore asks one thing at a time; this one does not
        wait = struct.pack("!d", 60.0)
        raw.sendall(b"".join(request_frame(b"G", f"missing{i}", wait) for i in range(10_000)))
        assert_closed_by_the_server(raw)
    assert master._server._waiters == {}
    assert_serves(master.port)


@pytest.mark.timeout(60)
def test_the_connection_cap_refuses_cleanly():
    with TCPStore(HOST, 0, is_master=True, timeout=10, max_connections=3) as master:
        clients = [TCPStore(HOST, master.port, timeout=5) for _ in range(2)]  # with master's: 3
        with pytest.raises(CollectiveError, match="refused a connection: the store already serves "
                                                  "its maximum of 3 clients"):
            TCPStore(HOST, master.port, timeout=30)  # refused at once: the test's bound shows it
        clients.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the freed place is served once the server has seen the close
            try:
                clients.append(TCPStore(HOST, master.port, timeout=5))
                break
            except CollectiveError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        clients[-1].set("in", b"yes")
        assert master.get("in") == b"yes"
        for client in clients:
            client.close()


FD_HOST = """
    import os, resource, sys
    from pycoll.distributed.store import TCPStore
    store = TCPStore("127.0.0.1", 0, is_master=True, timeout=30, max_connections=1000)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 6, hard))
    print(store.port, flush=True)
    sys.stdin.read()  # serve until the test closes our stdin
    store.close()
"""


@pytest.mark.timeout(90)
def test_running_out_of_file_descriptors_in_accept_is_survived():
    host = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FD_HOST)], text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port = int(host.stdout.readline())
        conns = [socket.create_connection((HOST, port), timeout=0.5) for _ in range(20)]
        greeted = 0
        for conn in conns:
            try:
                greeted += read_frame(conn) == (OK, b"")
            except (socket.timeout, AssertionError):
                pass
        assert 0 < greeted < len(conns), f"{greeted} of {len(conns)} accepted: no EMFILE was hit"
        for conn in conns:
            conn.close()
        assert_serves(port)
        assert_serves(port, "again")
        out, err = host.communicate("", timeout=30)
    finally:
        if host.poll() is None:
            host.kill()
    assert host.returncode == 0, err
    assert err.count("cannot accept connections") == 1, err  # one warning, not one per retry


@pytest.mark.timeout(60)
def test_one_clients_failure_drops_that_client_only(master, monkeypatch):
    real_get = StoreServer._get

    def failing_get(self, client, key, arg):
        if key == "boom":
            raise RuntimeError("injected")
        real_get(self, client, key, arg)

    monkeypatch.setattr(StoreServer, "_get", failing_get)
    with TCPStore(HOST, master.port, timeout=5) as victim:
        with pytest.raises(CollectiveError, match=r"get\('boom'\).*closed the connection"):
            victim.get("boom")
    garbage = [b"\x00\x00\x00\x02zz",  # shorter than a request header
               request_frame(b"Q", "k", b""),  # an unknown op
               request_frame(b"A", "k", b"\x01"),  # add without its 8-byte amount
               request_frame(b"S", "k", b"")[:-1].replace(b"k", b"\xff") + b"\xff"]  # not utf-8
    for frame in garbage:
        with raw_client(master.port) as raw:
            raw.sendall(frame)
            assert_closed_by_the_server(raw)
    assert master._server._thread.is_alive()
    assert_serves(master.port)


# -- the job's token ---------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_only_clients_with_the_jobs_token_are_answered(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG, logger="pycoll")
    refusal = "refused this client: its PYCOLL_STORE_TOKEN differs from the store's"
    with TCPStore(HOST, 0, is_master=True, timeout=10, token=TOKEN) as master:
        with TCPStore(HOST, master.port, timeout=5, token=TOKEN) as friend:
            friend.set("k", b"v")
            assert master.get("k") == b"v"
        messages = []
        for stranger_token in ("another-job", None):  # a wrong token, and none at all
            with TCPStore(HOST, master.port, timeout=5, token=stranger_token) as stranger:
                with pytest.raises(CollectiveError, match=refusal) as info:
                    stranger.get("k")
                messages.append(str(info.value))
                with pytest.raises(CollectiveError, match="lost its connection earlier .the store refused this "
                                                          "client's PYCOLL_STORE_TOKEN"):
                    stranger.set("k", b"overwritten")
        with raw_client(master.port) as raw:  # the server closes after its refusal
            raw.sendall(request_frame(b"S", "k", b"overwritten", token=b"guess"))
            assert read_frame(raw) == (REFUSED, b"")
            assert_closed_by_the_server(raw)
        assert master.get("k") == b"v"
        monkeypatch.setenv("PYCOLL_STORE_TOKEN", TOKEN)  # the launcher's way
        with TCPStore(HOST, master.port, timeout=5) as rank:
            assert rank.get("k") == b"v"
            messages.append(repr(rank))
        messages.append(repr(master))
    assert any("store token differs" in r.getMessage() for r in caplog.records)
    seen = messages + [r.getMessage() for r in caplog.records]
    assert not [m for m in seen if TOKEN in m], seen


def test_an_unauthenticated_store_refuses_a_client_with_a_token(master):
    with TCPStore(HOST, master.port, timeout=5, token=TOKEN) as client:  # another job's rank?
        with pytest.raises(CollectiveError, match="PYCOLL_STORE_TOKEN differs"):
            client.set("k", b"v")


def test_bad_tokens_are_refused_without_echoing_them(monkeypatch):
    with pytest.raises(TypeError, match="token must be a str, got bytes"):
        TCPStore(HOST, 0, is_master=True, timeout=1, token=b"x")
    monkeypatch.setenv("PYCOLL_STORE_TOKEN", "y" * 2000)
    with pytest.raises(ValueError, match=r"PYCOLL_STORE_TOKEN\) is 2000 bytes long") as info:
        TCPStore(HOST, 0, is_master=True, timeout=1)
    assert "yyy" not in str(info.value)
