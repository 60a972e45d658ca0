"""Trace readers: each format from a small file written from its documented header; bad traces."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.errors import TraceError
from gpuplan.sim.traces import detect_format, read_trace


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_generic_csv(tmp_path: Path) -> None:
    p = write(
        tmp_path, "t.csv", "submit_time,duration,gpus,gpu\n0,3600,2,h100\n10,60,0.5,\n20,0,1,h100\n30,5,0,\n"
    )
    tr = read_trace(p)
    assert tr.format == "generic" and len(tr) == 2 and tr.records == 4
    assert tr.submit.tolist() == [0, 10] and tr.gpus.tolist() == [2, 0.5]
    assert tr.gpu_type is not None and tr.gpu_type.tolist() == ["h100", None]
    assert tr.skipped == {"non_positive_duration": 1, "no_gpu": 1}


def test_openb_rules(tmp_path: Path) -> None:
    header = (
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
        "creation_time,deletion_time,scheduled_time\n"
    )
    rows = [
        "p0,1,1,1,460,,LS,Running,0,100,10",  # shared pod: 0.46 GPU, run 90 s
        "p1,1,1,2,1000,V100M16|V100M32,LS,Running,5,50,20",  # 2 GPUs, run 30 s
        "p2,1,1,0,0,,BE,Running,5,50,20",  # no GPU
        "p3,1,1,1,1000,,LS,Pending,7,,",  # never ran
        "p4,1,1,4,1000,,LS,Failed,8,20,20",  # zero run time
    ]
    tr = read_trace(write(tmp_path, "openb.csv", header + "\n".join(rows) + "\n"))
    assert tr.format == "alibaba-2023"
    assert (
        tr.gpus.tolist() == [0.46, 2.0] and tr.duration.tolist() == [90, 30] and tr.submit.tolist() == [0, 5]
    )
    assert tr.skipped == {"no_gpu": 1, "never_ran": 1, "non_positive_duration": 1}
    assert tr.gpu_type is not None and tr.gpu_type[1] == "V100M16|V100M32"


def test_openb_shared_trace_matches_its_readme(shared_dir: Path) -> None:
    tr = read_trace(shared_dir / "traces/alibaba-gpu-v2023/openb_pod_list_default.csv")
    assert tr.records == 8152
    assert tr.skipped["no_gpu"] == 1088  # "1,088 pods use no GPU"
    assert len(tr) + tr.skipped.get("never_ran", 0) + tr.skipped.get("non_positive_duration", 0) == 7064
    assert abs(tr.gpu_hours - 51_500) < 500  # "~51,500 GPU-hours"


def test_tiresias(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "60_job.csv",
        "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
        "0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n",
    )
    tr = read_trace(p)
    assert tr.format == "tiresias" and tr.gpus.tolist() == [1, 8] and tr.duration.tolist() == [164, 147]


def test_helios(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "cluster_log.csv",
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
        "j1,u,vc1,8,16,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:01:00,2020-04-01 01:01:00,3600,60\n"
        "j2,u,vc1,0,4,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:10,2020-04-01 00:10:10,600,0\n"
        "j3,u,vc1,2,4,1,CANCELLED,2020-04-01 00:02:00,,,0,0\n",
    )
    tr = read_trace(p)
    assert (
        tr.format == "helios" and len(tr) == 1 and tr.gpus.tolist() == [8] and tr.duration.tolist() == [3600]
    )
    assert tr.skipped == {"no_gpu": 1, "never_ran": 1}


def test_pai_task_table_with_and_without_header(tmp_path: Path) -> None:
    rows = (
        "j1,worker,2,Terminated,100,400,600,29,50,V100\n"
        "j1,ps,1,Terminated,100,500,600,29,0,\n"
        "j2,tensorflow,1,Terminated,200,260,600,29,100,T4\n"
        "j3,tensorflow,1,Running,300,,600,29,100,T4\n"
        "j4,tensorflow,1,Terminated,300,350,600,29,0,\n"
    )
    header = "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n"
    for name, text in (("with.csv", header + rows), ("pai_task_table.csv", rows)):
        sub = tmp_path / name.replace(".csv", "")
        sub.mkdir()
        tr = read_trace(write(sub, name, text))
        assert tr.format == "alibaba-pai-2020"
        assert tr.gpus.tolist() == [1.0, 1.0] and tr.duration.tolist() == [400, 60]
        assert tr.skipped == {"no_gpu": 1, "missing_time": 1}
        assert tr.gpu_type is not None and tr.gpu_type.tolist() == ["V100", "T4"]
    # a job table beside the headerless task table gives the submission times
    write(
        tmp_path / "pai_task_table",
        "pai_job_table.csv",
        "j1,i1,u,Terminated,90,500\nj2,i2,u,Terminated,150,260\n",
    )
    tr = read_trace(tmp_path / "pai_task_table" / "pai_task_table.csv")
    assert tr.submit.tolist() == [90, 150]
    # and the job table alone finds the task table beside it
    tr2 = read_trace(tmp_path / "pai_task_table" / "pai_job_table.csv", "alibaba-pai-2020")
    assert tr2.submit.tolist() == [90, 150]


def test_philly(tmp_path: Path) -> None:
    jobs = [
        {
            "status": "Pass",
            "vc": "v",
            "jobid": "a",
            "user": "u",
            "submitted_time": "2017-10-07 01:11:39",
            "attempts": [
                {
                    "start_time": "2017-10-07 01:12:09",
                    "end_time": "2017-10-07 01:13:23",
                    "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}],
                },
                {
                    "start_time": "2017-10-07 01:13:30",
                    "end_time": "2017-10-07 02:13:30",
                    "detail": [
                        {"ip": "m2", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]},
                        {"ip": "m3", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]},
                    ],
                },
            ],
        },
        {
            "status": "Killed",
            "vc": "v",
            "jobid": "b",
            "user": "u",
            "submitted_time": "2017-10-07 01:20:00",
            "attempts": [],
        },
        {
            "status": "Pass",
            "vc": "v",
            "jobid": "c",
            "user": "u",
            "submitted_time": "2017-10-07 01:30:00",
            "attempts": [
                {
                    "start_time": "2017-10-07 01:31:00",
                    "end_time": None,
                    "detail": [{"ip": "m1", "gpus": ["gpu0"]}],
                }
            ],
        },
    ]
    tr = read_trace(write(tmp_path, "cluster_job_log", json.dumps(jobs)))
    assert tr.format == "philly" and len(tr) == 1
    assert tr.gpus.tolist() == [8] and tr.duration.tolist() == [74 + 3600]
    assert tr.skipped == {"no_attempts": 1, "still_running": 1}


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("submit_time,gpus\n0,1\n", 1, "duration", "missing column"),
        ("submit_time,duration,gpus\n0,10,1\n5,-3,1\n", 3, "duration", "negative"),
        ("submit_time,duration,gpus\n0,10,1\n5,10,two\n", 3, "gpus", "expected a number"),
        ("submit_time,duration,gpus\n0,10,1\n,10,1\n", 3, "submit_time", "empty value"),
        ("", 1, None, "empty"),
        ("submit_time,duration,gpus\n", 2, None, "no job rows"),
    ],
)
@pytest.mark.parametrize("gpu_types", [True, False])  # False: the C reader first, the same errors
def test_bad_traces_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None, message: str, gpu_types: bool
) -> None:
    p = write(tmp_path, "bad.csv", text)
    with pytest.raises(TraceError, match=message) as info:
        read_trace(p, "generic" if text.startswith("submit_time,gpus") else "auto", gpu_types=gpu_types)
    err = info.value
    assert err.file == str(p) and err.line == line and err.field == field and err.hint


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    for name in ("submit", "duration", "gpus"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == np.float64 and np.array_equal(x, y), name
    assert (a.skipped, a.records, a.format, a.source) == (b.skipped, b.records, b.format, b.source)


def test_replay_reader_matches_the_general_one_on_the_shared_trace(shared_dir: Path) -> None:
    p = shared_dir / "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
    full, fast = read_trace(p), read_trace(p, gpu_types=False)
    _same(full, fast)
    assert full.gpu_type is not None and fast.gpu_type is None


@pytest.mark.parametrize(
    "text",
    [
        "submit_time,duration,gpus,gpu\n0,10,1,a100\n5, 2.5e1 ,0.25,\n7,1,0,h100\n",  # spaces, exponents, skips
        "submit_time,duration,gpus\r\n0,10,1\r\n-5,0.1,+2\r\n\r\n",  # CRLF, signs, a trailing blank line
        "\ufeffSubmit_Time,Duration,GPUs\n1,2,3\n4,5,6",  # BOM, case, no final newline
        'submit_time,duration,gpus\n0,10,1\n"5",10,1\n',  # quotes: the general reader
        "submit_time,duration,gpus\n0,10,1\n\n5,10,1\n",  # a blank line inside: the general reader
        "job_id,num_gpu,submit_time,duration\n1,4,100,3600\n2,0,200,60\n",  # tiresias
        "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,1,500,0,100,10\n"
        "p1,2,0,5,50,\np2,1,,7,70,7\n",  # openb: a share, a pod that never ran, no gpu_milli
    ],
)
def test_replay_reader_matches_the_general_one(tmp_path: Path, text: str) -> None:
    p = write(tmp_path, "t.csv", text)
    try:
        full = read_trace(p)
    except TraceError as exc:  # what the general reader refuses, the replay reader refuses the same way
        with pytest.raises(TraceError) as info:
            read_trace(p, gpu_types=False)
        assert str(info.value) == str(exc)
        return
    _same(full, read_trace(p, gpu_types=False))


# ------------------------------------------------------------------ the replay's compiled preparation


def _same_jobs(want, got) -> None:  # type: ignore[no-untyped-def]
    """Bit for bit: the columns, the units, the skips, the records, the format, the GPU-hours."""
    for name, fmt in (("submit", "d"), ("duration", "d"), ("gpus", "d"), ("units", "q")):
        a, b = getattr(want, name), getattr(got, name)
        assert a.format == b.format == fmt and bytes(a) == bytes(b), name
    assert (want.skipped, want.records, want.format) == (got.skipped, got.records, got.format)
    assert want.gpu_hours == got.gpu_hours


COMPILED = [  # (text, whether the C preparation takes it: else it hands it to the readers)
    ("submit_time,duration,gpus,gpu\n0,10,1,a100\n5, 2.5e1 ,0.25,\n7,1,0,h100\n", True),
    ("\ufeffSubmit_Time,Duration,GPUs\n1,2,3\n4,5,6", True),
    ("submit_time,duration,gpus\n9,10,1\n3,1,2\n3,4,0.5\n-1,7,1\n3,2,8\n0,0,1\n", True),  # out of order, ties
    ("submit_time,duration,gpus\n0,10,0.0004\n1,10,0.0005\n2,10,0.0015\n3,10,2.5e-3\n4,-0,1\n", True),  # rint
    ("job_id,num_gpu,submit_time,duration\n1,4,100,3600\n2,0,200,60\n3,1,50,0\n", True),  # tiresias
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,1,500,0,100,10\n"
     "p1,2,0,5,50,\np2,1,,7,70,7\np3,0,0,1,9,2\np4,1,0,2,9,2\np5,3,,9,,4\np6,2,,1,5,5\np7,1,250,0,100,10\n", True),
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,1,500,30,100,10\np1,8,,5,50,20\n", True),
    ('submit_time,duration,gpus\n0,10,1\n"5",10,1\n', False),  # quotes: the general reader
    ("submit_time,duration,gpus\n0,10,1\n5,-3,1\n", False),  # errors: the readers name them
    ("submit_time,duration,gpus\n0,10,1\n,10,1\n", False),
    ("submit_time,duration,gpus\n0,10,1\n5,inf,1\n", False),
    ("submit_time,duration,gpus\n0,1e999,1\n", False),
    ("submit_time,duration,gpus\n0,10,0\n5,0,1\n", False),  # no usable job
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,1,-5,0,100,10\n", False),
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,,5,0,100,10\n", False),
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,-1,5,0,100,10\n", False),
    ("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np0,1,5,0,inf,10\n", False),
    ("num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n1,5,0,9,1\n", False),  # no `name`: generic?
    ("job_id,num_gpu,submit_time\n1,4,100\n", False),  # tiresias without duration
]


@pytest.mark.parametrize(("text", "compiled"), COMPILED)
def test_compiled_jobs_equal_the_readers_and_jobs_from_trace(tmp_path: Path, text: str, compiled: bool) -> None:
    """`read_jobs` (the C reader and `prepare_jobs`) gives the jobs the general reader and
    `Jobs.from_trace` give, bit for bit; what they refuse it refuses with their message."""
    from gpuplan.sim.plain_csv import read_plain_columns
    from gpuplan.sim.replay import Jobs, read_jobs

    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    p = write(tmp_path, "t.csv", text)
    try:
        want = Jobs.from_trace(read_trace(p))
    except TraceError as exc:
        with pytest.raises(TraceError) as info:
            read_jobs(p)
        assert str(info.value) == str(exc)
        assert not compiled
        return
    _same_jobs(want, read_jobs(p))
    plain = read_plain_columns(p, "auto", 1000)
    took = plain is not None and ck.prepare_jobs(int(plain[0] == "alibaba-2023"), plain[2]) is not None
    assert took == compiled


def test_compiled_jobs_on_the_shared_trace_in_and_out_of_order(shared_dir: Path, tmp_path: Path) -> None:
    """The openb pod list as it is (in submit order), and its rows shuffled (the merge sort, stable on
    equal submit times: the pod list has many)."""
    import random

    from gpuplan.sim.replay import Jobs, read_jobs

    pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    p = shared_dir / "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
    _same_jobs(Jobs.from_trace(read_trace(p)), read_jobs(p))
    head, *rows = p.read_text(encoding="utf-8").splitlines()
    random.Random(7).shuffle(rows)
    q = write(tmp_path, "shuffled.csv", "\n".join([head, *rows]) + "\n")
    want, got = Jobs.from_trace(read_trace(q)), read_jobs(q)
    _same_jobs(want, got)
    assert list(got.submit) == sorted(got.submit) and len(got) == len(want) > 6000


def test_the_row_limit_is_counted_by_the_c_reader_and_the_general_one(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.sim import limits
    from gpuplan.sim.replay import read_jobs

    monkeypatch.setattr(limits, "MAX_TRACE_ROWS", 3)
    plain = write(tmp_path, "plain.csv", "submit_time,duration,gpus\n" + "0,60,1\n" * 3)
    assert len(read_jobs(plain)) == 3  # at the limit
    for text in ("0,60,1\n" * 4, '"0",60,1\n' * 4):  # plain (the C reader), quoted (the general reader)
        with pytest.raises(TraceError, match="more than 3 rows"):
            read_jobs(write(tmp_path, "big.csv", "submit_time,duration,gpus\n" + text))


def test_unknown_header_and_all_skipped(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot tell the trace format"):
        read_trace(write(tmp_path, "x.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(TraceError, match="no usable jobs"):
        read_trace(write(tmp_path, "y.csv", "submit_time,duration,gpus\n0,10,0\n"))
    assert detect_format(write(tmp_path, "z.json", "  [\n]")) == "philly"
    assert np.isfinite(
        read_trace(write(tmp_path, "ok.csv", "submit_time,duration,gpus\n0,1,1\n")).submit
    ).all()


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's zone is a daylight-saving one (clocks went forward 2017-03-12 02:00 there)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _philly_job(submitted: str, start: str, end: str) -> dict[str, object]:
    return {
        "jobid": "a",
        "submitted_time": submitted,
        "attempts": [{"start_time": start, "end_time": end, "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}],
    }


@pytest.mark.usefixtures("new_york")
def test_philly_times_are_utc_not_the_machine_zone(tmp_path: Path) -> None:
    # 01:00 -> 03:00 on the day New York skips an hour: two hours, read in UTC
    job = _philly_job("2017-03-12 00:59:00", "2017-03-12 01:00:00", "2017-03-12 03:00:00")
    tr = read_trace(write(tmp_path, "cluster_job_log", json.dumps([job])))
    assert tr.duration.tolist() == [7200]
    assert tr.submit.tolist() == [datetime(2017, 3, 12, 0, 59, tzinfo=UTC).timestamp()]


@pytest.mark.usefixtures("new_york")
@pytest.mark.parametrize(
    ("start", "end", "hours"),
    [
        ("2017-03-12 01:00:00-05:00", "2017-03-12 03:00:00-04:00", 1),  # the offsets say New York: 1 real hour
        ("2017-03-12T06:00:00Z", "2017-03-12 08:00:00 +0000", 2),
        ("2017-03-12 06:00:00.5+00", "2017-03-12 09:00:00.5+01:00", 2),
    ],
)
def test_philly_times_with_an_offset_honour_it(tmp_path: Path, start: str, end: str, hours: int) -> None:
    tr = read_trace(write(tmp_path, "cluster_job_log", json.dumps([_philly_job(start, start, end)])))
    assert tr.duration.tolist() == [hours * 3600]


@pytest.mark.parametrize("bad", ["2017-02-30 01:00:00", "2017-10-07 25:00:00", "07/10/2017 01:00", "2017-10-07"])
def test_philly_bad_time(tmp_path: Path, bad: str) -> None:
    job = _philly_job("2017-10-07 01:00:00", bad, "2017-10-07 02:00:00")
    with pytest.raises(TraceError, match="expected a time like") as info:
        read_trace(write(tmp_path, "cluster_job_log", json.dumps([job])))
    assert info.value.field == "[0].attempts[0].start_time" and info.value.hint


@pytest.mark.usefixtures("new_york")
def test_helios_times_are_utc_unless_offset(tmp_path: Path) -> None:
    head = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,queue\n"
    p = write(
        tmp_path,
        "cluster_log.csv",
        head + "j1,u,vc1,8,16,1,COMPLETED,2017-03-12 00:59:00,2017-03-12 01:00:00,2017-03-12 03:00:00,60\n"
        "j2,u,vc1,8,16,1,COMPLETED,2017-03-12 00:59:00,2017-03-12 01:00:00-05:00,2017-03-12 03:00:00-04:00,60\n"
        "j3,u,vc1,8,16,1,COMPLETED,2017-03-12 00:59:00Z,2017-03-12 06:00:00Z,2017-03-12 09:00:00 +01:00,60\n",
    )
    tr = read_trace(p)
    assert tr.duration.tolist() == [7200, 3600, 7200]
    assert tr.submit.tolist() == [datetime(2017, 3, 12, 0, 59, tzinfo=UTC).timestamp()] * 3


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_replay_reader_in_parallel_chunks_matches_the_general_one(tmp_path: Path, newline: str) -> None:
    """Over 4 MB the C reader cuts the file into chunks at line ends, one thread each."""
    rng = np.random.default_rng(11)
    n = 200_000
    submit = np.sort(rng.integers(0, 10**9, n))
    rows = [f"{s},{d},{g},x{k % 7}" for k, (s, d, g) in enumerate(
        zip(submit, rng.integers(0, 10**6, n), rng.choice(["0", "0.25", "1", "8", "2.5e0"], n), strict=True))]
    text = newline.join(["submit_time,duration,gpus,gpu", *rows])  # no newline after the last row
    p = write(tmp_path, "big.csv", text)
    assert p.stat().st_size > 4 << 20
    full, fast = read_trace(p), read_trace(p, gpu_types=False)
    _same(full, fast)
    assert fast.records == n


CELLS = st.one_of(st.integers(-10**12, 10**12).map(str), st.floats(-1e9, 1e9, allow_nan=False).map(repr),
                  st.just(""), st.sampled_from(["0", "1.5", "1e3", " 7 ", "-0"]))


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(st.tuples(CELLS, CELLS, CELLS), min_size=1, max_size=40),
    window=st.sampled_from([1, 7, 50, 333, 4096]),
    newline=st.sampled_from(["\n", "\r\n"]),
    last_newline=st.booleans(),
    bom=st.booleans(),
)
def test_the_c_reader_maps_the_file_in_windows_and_reads_every_value(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, str]], window: int, newline: str,
    last_newline: bool, bom: bool,
) -> None:
    """read_columns maps the file a window at a time (64 MiB by default; here as small as a byte, so
    that lines cross every window's edge and windows grow for long lines): the values equal Python's
    float() of each cell (NaN where empty), whatever the window."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    text = newline.join(["a,skip,b,c", *(f"{x},zz,{y},{z}" for x, y, z in rows)]) + (newline if last_newline else "")
    f = tmp_path_factory.mktemp("win") / "t.csv"
    f.write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    want = [[float(r[k]) if r[k].strip() else float("nan") for r in rows] for k in range(3)]
    for w in (window, 0):
        got = ck.read_columns(str(f), ("c", "a", "b"), -1, w)
        assert got is not None
        n, cols = got
        assert n == len(rows)
        values = [np.frombuffer(c, dtype=np.float64).tolist() for c in cols]
        assert np.array_equal(values, [want[2], want[0], want[1]], equal_nan=True)
    assert ck.read_columns(str(f), ("a",), len(rows) - 1, window) == (len(rows), None)  # past max_rows: the count
    assert ck.read_columns(str(f), ("a",), len(rows), window) is not None  # at it: read


def _oracle_columns(body: list[str], ncols: int, wanted: tuple[int, ...]) -> list[list[float]] | None:
    """What read_columns must give for these lines (each without its newline), by Python's rules: None
    for a blank line, a quote, another number of fields or a cell that is not a plain number."""
    import re

    out: list[list[float]] = [[] for _ in wanted]
    for line in body:
        line = line.removesuffix("\r")
        if not line or '"' in line or line.count(",") != ncols - 1:
            return None
        cells = line.split(",")
        for w, c in enumerate(wanted):
            cell = cells[c].strip(" \t")
            if not cell:
                out[w].append(float("nan"))
            elif len(cell) >= 64 or not re.fullmatch(r"[0-9.eE+-]+", cell):
                return None
            else:
                try:
                    out[w].append(float(cell))
                except ValueError:
                    return None
    return out


LONG_CELLS = st.one_of(CELLS, st.integers(0, 10**15).map(str), st.integers(10**15, 10**17).map(str),
                       st.sampled_from(["-12345678", "+999999999", "00000000012", "1.0", "7x", "1e", "--1", "1 2"]))
FLAWS = ["", "\r", "1,2,3", "1,2,3,4,5", '1,"2",3,4', "x,y,z,w"]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(LONG_CELLS, st.text("abcxyz-_ ", max_size=30), LONG_CELLS, LONG_CELLS),
                  min_size=200, max_size=1500),
    newline=st.sampled_from(["\n", "\r\n"]),
    flaw=st.none() | st.tuples(st.sampled_from(FLAWS), st.floats(0, 1)),
    long_line=st.booleans(),
)
def test_the_c_reader_over_many_blocks_matches_pythons_rules(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, str, str]], newline: str,
    flaw: tuple[str, float] | None, long_line: bool,
) -> None:
    """Files of many 16 KB blocks (the block reader's lists of separators), lines of every length (one
    longer than a block, read by the line loop), and at most one flawed line anywhere (blank, another
    field count, a quote, a word): read_columns gives what Python's split and float() give, or None."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    body = [",".join(r) for r in rows]
    if long_line:
        body.insert(len(body) // 3, f"1,{'s' * 20_000},2,3")
    if flaw is not None:
        body.insert(int(flaw[1] * len(body)), flaw[0])
    f = tmp_path_factory.mktemp("blocks") / "t.csv"
    f.write_bytes(newline.join(["a,skip,b,c", *body, ""]).encode())
    want = _oracle_columns(body, 4, (3, 0, 2))
    got = ck.read_columns(str(f), ("c", "a", "b"), -1)
    if want is None:
        assert got is None
        return
    assert got is not None and got[0] == len(body)
    values = [np.frombuffer(c, dtype=np.float64) for c in got[1]]
    for v, w in zip(values, want, strict=True):
        assert np.array_equal(v, np.array(w), equal_nan=True)
        assert np.array_equal(np.signbit(v), np.signbit(np.array(w)))  # -0 stays -0


@pytest.mark.parametrize("blank", ["\n", "\r\n"])
def test_a_blank_line_in_a_one_column_file_goes_to_the_general_reader(tmp_path: Path, blank: str) -> None:
    """With one column a blank line has the right field count: only the blank-line rule refuses it."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    f = tmp_path / "one.csv"
    f.write_bytes(("a\n" + "12\n" * 100 + blank + "12\n" * 100).encode())
    assert ck.read_columns(str(f), ("a",), -1) is None
    f.write_bytes(("a\n" + "12\n" * 201).encode())
    assert ck.read_columns(str(f), ("a",), -1) == (201, [np.full(201, 12.0).tobytes()])


@pytest.mark.parametrize("line", ["\n", "1\n", "12,3\n" * 7 + "\n"])
def test_the_c_reader_counts_every_newline(tmp_path: Path, line: str) -> None:
    """The row count (past `max_rows`: the count, no columns) over long runs of newlines, as dense as
    they come (a file of blank lines: every byte)."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    f = tmp_path / "n.csv"
    f.write_bytes(("a\n" + line * 50_001).encode())
    assert ck.read_columns(str(f), ("a",), 5) == ((line * 50_001).count("\n"), None)


def test_prepare_jobs_takes_any_writable_float64_buffers() -> None:
    """Views of the kept jobs are cut in bytes whatever the columns' own format (here array('d'))."""
    from array import array

    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    got = ck.prepare_jobs(0, [array("d", [1, 2]), array("d", [1, 1]), array("d", [0, 1])])  # row 0: no GPU
    assert got is not None
    counts, gpu_hours, submit, duration, gpus, units = got
    assert counts == (1, 0, 0, 0) and gpu_hours == 1 / 3600
    assert [bytes(v) for v in (submit, duration, gpus)] == [array("d", [x]).tobytes() for x in (2, 1, 1)]
    assert bytes(units) == array("q", [1000]).tobytes()
