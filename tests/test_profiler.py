"""pycoll.profiler against paddle 3.3.1's: the scheduler's states, the Profiler's state machine
(its warnings and on_trace_ready calls), the Chrome trace it writes, step_info and the Perf
Summary, summary's tables, RecordEvent and the collectives recorded on 2 ranks.

Where a test says "paddle", the expected values were observed running the same script on paddle
3.3.1's CPU build (/tmp/h6 scratch scripts, `sed s/paddle/pycoll/` of each other)."""
import json
import os
import re
import time
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.profiler as profiler
from conftest import assert_ok, launch
from pycoll.profiler.recorder import HostEvent
from pycoll.profiler.result import ProfilerResult
from pycoll.profiler.summary_tables import build_summary, merged_time
from pycoll.profiler.timer import SKIP_STEPS

S = profiler.ProfilerState
T = profiler.TracerEventType


def states(scheduler, n):
    return [scheduler(i).name for i in range(n)]


def test_make_scheduler_states_are_paddles():
    # paddle: make_scheduler(closed=1, ready=1, record=4, repeat=1) over 10 steps
    assert states(profiler.make_scheduler(closed=1, ready=1, record=4, repeat=1), 10) == [
        'CLOSED', 'READY', 'RECORD', 'RECORD', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED', 'CLOSED', 'CLOSED', 'CLOSED']
    # paddle: make_scheduler(closed=1, ready=1, record=3, skip_first=1) over 12 steps (repeat 0: for ever)
    assert states(profiler.make_scheduler(closed=1, ready=1, record=3, skip_first=1), 12) == [
        'CLOSED', 'CLOSED', 'READY', 'RECORD', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED', 'READY', 'RECORD', 'RECORD',
        'RECORD_AND_RETURN', 'CLOSED']
    with pytest.warns(UserWarning, match="noisy"):  # ready=0, as paddle warns
        profiler.make_scheduler(closed=1, ready=0, record=2)
    with pytest.raises(TypeError):  # keyword-only, as paddle's
        profiler.make_scheduler(1, 1, 1)
    with pytest.raises(ValueError, match="record must be an int >= 1, got 0"):
        profiler.make_scheduler(closed=1, ready=1, record=0)
    with pytest.raises(ValueError, match="closed"):
        profiler.make_scheduler(closed=-1, ready=1, record=1)


def test_a_pair_scheduler_records_steps_start_to_end(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ready = []
    # paddle: scheduler=(0, 3) -> RECORD at 0, 1, RECORD_AND_RETURN at 2, handed over at 3, then CLOSED
    with pytest.warns(UserWarning, match="noisy"):
        p = profiler.Profiler(scheduler=(0, 3), on_trace_ready=lambda prof: ready.append(prof.step_num))
    seen = [p.current_state.name]
    with p:
        for _ in range(5):
            p.step()
            seen.append(p.current_state.name)
    assert seen == ['RECORD', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED', 'CLOSED', 'CLOSED']
    assert ready == [3]
    assert not os.path.exists("profiler_log")  # a given on_trace_ready: the default directory is not made
    with pytest.raises(ValueError, match="end_batch > start_batch"):
        profiler.Profiler(scheduler=(3, 3))
    with pytest.raises(TypeError, match="scheduler"):
        profiler.Profiler(scheduler=5)


def test_improper_transitions_warn_and_hand_over_as_paddles():
    seq = [S.RECORD, S.CLOSED, S.READY, S.CLOSED, S.RECORD_AND_RETURN, S.READY, S.RECORD, S.READY]
    handed = []
    p = profiler.Profiler(scheduler=lambda s: seq[s % 8],
                          on_trace_ready=lambda prof: handed.append((prof.step_num, prof.current_state)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p.start()
        for _ in range(8):
            p.step()
        p.stop()
    # paddle: these three warnings in this order, and on_trace_ready at step 5 (READY) and 8 (RECORD)
    assert [str(w.message) for w in caught] == [
        "Improper schedule: RECORD->CLOSED, profiler will not saving data",
        "Improper schedule: READY->CLOSED, profiler will start and stop without saving data",
        "Improper schedule: RECORD->READY, profiler will stop and re-prepare"]
    assert handed == [(5, S.READY), (8, S.RECORD)]
    # the last period (step 8, recorded from the READY->RECORD start to stop) holds ProfileStep#8 only
    assert [e.name for e in p.profiler_result.get_data()] == ["ProfileStep#8"]


def test_chrome_trace_holds_the_steps_and_record_events(tmp_path):
    log = tmp_path / "log"
    p = profiler.Profiler(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing(str(log), "w"))
    assert log.is_dir()  # made at once, as paddle's
    with p:
        for _ in range(8):
            with profiler.RecordEvent("my_ev"):
                time.sleep(0.0005)
            other = profiler.RecordEvent("other")
            other.begin()
            other.end()
            p.step()
    (name,) = os.listdir(log)
    assert re.fullmatch(r"w_time_\d{4}(_\d\d){5}_\d{6}\.paddle_trace\.json", name)
    with open(log / name) as f:
        doc = json.load(f)
    assert doc["displayTimeUnit"] == "ms" and doc["schemaVersion"] == "1.0.2"
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    # paddle: the same spans (besides its own operator events) for this loop
    assert sorted((e["cat"], e["name"].split("[")[0]) for e in spans) == (
        [("ProfileStep", f"ProfileStep#{i}") for i in (2, 3, 4)] + [("PythonUserDefined", "my_ev")] * 3
        + [("PythonUserDefined", "other")] * 3)
    for e in spans:
        assert e["name"].endswith(f"[{e['dur']:.3f} us]") and e["tid"].endswith("(Python)")
    steps = sorted((e for e in spans if e["cat"] == "ProfileStep"), key=lambda e: e["ts"])
    for mine in (e for e in spans if e["name"].startswith("my_ev")):
        assert mine["dur"] >= 500  # slept 0.5 ms
        assert any(s["ts"] <= mine["ts"] <= s["ts"] + s["dur"] for s in steps)
    assert {e["name"] for e in doc["traceEvents"] if e["ph"] == "M"} == {
        "process_name", "thread_name", "process_sort_index", "thread_sort_index"}
    # read back: the same spans, durations to the nanosecond
    back = profiler.load_profiler_result(str(log / name))
    assert sorted((e.name, e.type.name, round((e.end_ns - e.start_ns) / 1e3, 3)) for e in back.get_data()) == sorted(
        (e["name"].split("[")[0], e["cat"], e["dur"]) for e in spans)
    again = tmp_path / "again.json"
    back.save(str(again))
    with open(again) as f:
        assert [(e["name"], e["ts"], e["dur"]) for e in json.load(f)["traceEvents"] if e["ph"] == "X"] == [
            (e["name"], e["ts"], e["dur"]) for e in sorted(spans, key=lambda e: (e["ts"], -e["dur"]))]


def test_data_loader_reads_are_dataloader_spans(tmp_path, capsys):
    loader = pycoll.io.DataLoader(pycoll.io.TensorDataset([pycoll.arange(12.0)]), batch_size=3)
    p = profiler.Profiler(scheduler=(1, 3), on_trace_ready=lambda prof: None)
    with p:
        for _ in loader:  # 4 batches; steps 1 and 2 are recorded
            p.step()
    got = [e for e in p.profiler_result.get_data() if e.type == T.Dataloader]
    # paddle: one span a batch, named after its single-process iterator
    assert [e.name for e in got] == ["_DataLoaderIterSingleProcess"] * 2
    p.summary(views=[profiler.SummaryView.OverView])
    assert re.search(r"^\s+Dataloader\s+2\s", capsys.readouterr().out, re.M)


def test_record_event_outside_recording_is_not_kept():
    p = profiler.Profiler(scheduler=profiler.make_scheduler(closed=1, ready=1, record=1, repeat=1),
                          on_trace_ready=lambda prof: None)
    with profiler.RecordEvent("before_start"):
        pass
    with p:
        for _ in range(3):  # steps 0 CLOSED, 1 READY, 2 RECORD_AND_RETURN
            with profiler.RecordEvent(f"in_step_{p.step_num}"):
                pass
            p.step()

    @profiler.RecordEvent("decorated")
    def work():
        return 7

    assert work() == 7
    assert sorted(e.name for e in p.profiler_result.get_data()) == ["ProfileStep#2", "in_step_2"]
    assert not profiler.utils.in_profiler_mode()
    with pytest.raises(TypeError, match="name must be a str"):
        profiler.RecordEvent(3)
    with pytest.raises(TypeError, match="event_type"):
        profiler.RecordEvent("x", "Forward")


def test_timer_only_times_steps_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    p = profiler.Profiler(timer_only=True)
    assert os.listdir("profiler_log") == []  # paddle: the default directory is made, and stays empty
    class Slow(pycoll.io.Dataset):  # each batch of 4 takes >= 1 ms to read
        def __getitem__(self, i):
            if i % 4 == 0:
                time.sleep(0.001)
            return np.float32(i)

        def __len__(self):
            return 4 * (SKIP_STEPS + 3)

    p.start()
    infos = []
    for i, _ in enumerate(pycoll.io.DataLoader(Slow(), batch_size=4)):  # the loader times its reads
        p.step(num_samples=np.int64(4))  # a NumPy count is taken as an int
        if i % 10 == 0:
            infos.append(p.step_info(unit="images"))
    p.stop()
    assert os.listdir("profiler_log") == [] and p.profiler_result is None
    # paddle: ' reader_cost: 0.00110 s batch_cost: 0.00320 s ips: 1249.505 images/s'
    pattern = r" reader_cost: (\d+\.\d{5}) s batch_cost: (\d+\.\d{5}) s ips: (\d+\.\d{3}) images/s"
    for info in infos:
        reader, batch, ips = map(float, re.fullmatch(pattern, info).groups())
        assert reader >= 0.001 and batch >= reader
        assert ips == pytest.approx(4 / batch, rel=6e-6 / batch)  # 4 samples a step; batch printed to 1e-5 s
    lines = capsys.readouterr().out.splitlines()
    # paddle's Perf Summary layout
    assert lines[0] == "=" * 44 + "Perf Summary" + "=" * 44
    assert re.fullmatch(r"Reader Ratio: \d+\.\d{3}%", lines[1])
    assert lines[2] == "Time Unit: s, IPS Unit: images/s"
    assert lines[3] == "|                 |       avg       |       max       |       min       |"
    assert [line.split("|")[1].strip() for line in lines[4:]] == ["reader_cost", "batch_cost", "ips"]
    for line in lines[4:]:
        avg, high, low = (float(c) for c in line.split("|")[2:5])
        assert low <= avg <= high


def test_step_info_in_steps_and_no_summary_for_short_runs(tmp_path, capsys):
    p = profiler.Profiler(timer_only=True, on_trace_ready=lambda prof: None)
    p.start()
    for _ in range(SKIP_STEPS):
        p.step()
    info = p.step_info()
    p.stop()
    batch, ips = map(float, re.fullmatch(r" batch_cost: (\d+\.\d{5}) s ips: (\d+\.\d{3}) steps/s", info).groups())
    assert capsys.readouterr().out == ""  # paddle: no Perf Summary for 10 steps or fewer
    with pytest.raises(ValueError, match="num_samples"):
        p.step(num_samples=0)


def _event(name, kind, start_us, end_us, tid=1):
    return HostEvent(name, kind, start_us * 1000, end_us * 1000, tid, "MainThread")


def test_summary_tables_from_known_spans():
    events = [_event("ProfileStep#0", T.ProfileStep, 0, 1000), _event("ProfileStep#1", T.ProfileStep, 1000, 3000),
              _event("fwd", T.PythonUserDefined, 100, 600), _event("fwd", T.PythonUserDefined, 1200, 1500),
              _event("opt", T.PythonUserDefined, 2000, 2900, tid=2),
              _event("all_reduce", T.Communication, 300, 500), _event("all_reduce", T.Communication, 400, 700)]
    result = ProfilerResult(events, {"Process Cpu Utilization": "0.5", "System Cpu Utilization": "0.25"})
    text = build_summary(result, time_unit="us")
    lines = text.splitlines()
    assert lines[0] == "-------------------Device Summary-------------------"
    assert "CPU(Process)                    50.00                 " in lines
    assert "CPU(System)                     25.00                 " in lines
    # overview: merged time per type over the steps' 3000 us, longest first
    overview = lines[lines.index(next(x for x in lines if "Overview Summary" in x)):]
    overview = overview[:overview.index(next(x for x in overview if "GPU Time" in x))]
    rows = [line.split() for line in overview[5:-1]]
    assert rows == [["ProfileStep", "2", "3000.00", "100.00"], ["PythonUserDefined", "3", "1700.00", "56.67"],
                    ["Communication", "2", "400.00", "13.33"]]
    assert "  Communication            400.00                     13.33                      " in lines
    # user-defined: by name, sorted by total; total / avg / max / min / share of the steps (the name
    # column as wide as the longest name, as paddle sizes it)
    assert "opt  1       900.00 / 900.00 / 900.00 / 900.00 / 30.00  0.00 / 0.00 / 0.00 / 0.00 / 0.00          " in lines
    assert "fwd  2       800.00 / 400.00 / 500.00 / 300.00 / 26.67  0.00 / 0.00 / 0.00 / 0.00 / 0.00          " in lines
    assert lines.index(next(x for x in lines if x.startswith("opt"))) < lines.index(
        next(x for x in lines if x.startswith("fwd")))
    by_min = build_summary(result, sorted_by=profiler.SortedKeys.CPUMin, views=[profiler.SummaryView.UDFView])
    assert by_min.index("\nfwd ") < by_min.index("\nopt ")  # smallest min first, as paddle's CPUMin
    per_thread = build_summary(result, thread_sep=True, views=[profiler.SummaryView.UDFView])
    assert "Thread: 1" in per_thread and "Thread: 2" in per_thread
    only = build_summary(result, views=[profiler.SummaryView.DistributedView])
    assert "Distribution Summary" in only and "Overview" not in only and "Device" not in only
    assert "  Communication            0.40                       13.33                      " in only.splitlines()
    with pytest.raises(ValueError, match="time_unit"):
        build_summary(result, time_unit="min")
    assert merged_time([(0, 10), (5, 12), (20, 30), (21, 22)]) == 22


def test_protobuf_is_refused_and_bad_files_named(tmp_path):
    with pytest.raises(NotImplementedError, match="protobuf"):
        profiler.export_protobuf(str(tmp_path))
    p = profiler.Profiler(on_trace_ready=lambda prof: None)
    with pytest.raises(NotImplementedError, match="format='json'"):
        p.export(str(tmp_path / "x.pb"), "pb")
    with pytest.raises(ValueError, match="format must be 'json' or 'pb'"):
        p.export(str(tmp_path / "x.txt"), "txt")
    bad = tmp_path / "x.pb"
    bad.write_bytes(b"\x0a\x03abc")
    with pytest.raises(ValueError, match="not a JSON trace"):
        profiler.load_profiler_result(str(bad))
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="traceEvents"):
        profiler.load_profiler_result(str(tmp_path / "other.json"))


def test_job_schedule_profiler_range():
    with profiler.utils.job_schedule_profiler_range(3, 2, 5) as inside:
        assert inside is True
    with profiler.utils.job_schedule_profiler_range(5, 2, 5) as inside:
        assert inside is False
    with pytest.raises(SystemExit):
        with profiler.utils.job_schedule_profiler_range(4, 2, 5):
            pass
    with profiler.utils.job_schedule_profiler_range(4, 2, 5, exit_after_prof=False) as inside:
        assert inside is True


def test_profiler_is_pycolls_attribute_and_targets_warn():
    assert pycoll.profiler is profiler
    # paddle's CPU build: GPU is dropped with this warning; the default targets are CPU and CUSTOM_DEVICE
    with pytest.warns(UserWarning, match=r"Profiling ProfilerTarget.GPU is not supported in current context."):
        p = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU, profiler.ProfilerTarget.GPU],
                              on_trace_ready=lambda prof: None)
    assert p.targets == {profiler.ProfilerTarget.CPU}
    assert profiler.Profiler(on_trace_ready=print).targets == {profiler.ProfilerTarget.CPU,
                                                                profiler.ProfilerTarget.CUSTOM_DEVICE}


def test_collectives_are_recorded_on_two_ranks(tmp_path):
    assert_ok(launch(2, "profiler_collectives.py", str(tmp_path / "traces"), timeout=90), expect_lines=2)
