"""Heavy web requests (plan, simulate, audit, the plan report) run in worker processes, through `gpuplan.api`.

Each request becomes a typed call (a frozen dataclass below, pickled; never a command line) that a
worker runs in-process with the api. Workers are child processes started with a fixed command line
(`python -m gpuplan.web.worker`) that live across requests and answer one call at a time over their
stdin/stdout pipes (8-byte length + pickle, both ends ours). Why processes and not threads: a call that
runs past the time limit is stopped by killing its worker (a thread cannot be stopped), and each worker
has its own memory bound (`RLIMIT_DATA`). The pool replaces killed or failed workers on the next call.

Uploads are written into a private temporary folder per call, each in its own generated folder
(`upload-0/`, `upload-1/`, ...) under its client name reduced to one safe path component: the name is a
label (nvidia-smi logs without a hostname column name their node after the file, as on the CLI), the
path is ours. Every answer and error maps those paths back to the labels.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import struct
import subprocess
import sys
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from gpuplan.constants import DEFAULT_QUEUEING, Packing, Queueing

Lang = Literal["en", "zh"]
SCENARIO_NAME = "scenario.yaml"
DEMAND_NAME = "demand.csv"
PLAN_NAME = "plan.json"
Reply = tuple[int, bytes]  # HTTP status, body (JSON, or HTML for a report)


# --- the calls -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    """An uploaded file: the client's name for it (a label only) and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class PlanCall:
    """`plan -o json` of a scenario text (and an optional demand CSV), or its HTML report."""

    scenario: str
    lang: Lang = "en"
    demand_csv: str | None = None
    report: Literal["none", "page", "fragment"] = "none"
    catalog: str | None = None
    queueing: Queueing = DEFAULT_QUEUEING

    def run(self, inputs: Inputs) -> Any:
        from gpuplan import api

        scen = inputs.add(SCENARIO_NAME, self.scenario.encode())
        demand = inputs.add(DEMAND_NAME, self.demand_csv.encode()) if self.demand_csv is not None else None
        data = inputs.unlabel(api.plan_scenario(scen, self.catalog, self.lang, demand=demand,
                                                      queueing=self.queueing))
        if self.report == "none":
            return data
        from gpuplan.render.html import render_report

        return render_report("plan", data, self.lang, fragment=self.report == "fragment")


@dataclass(frozen=True)
class SimulateCall:
    """`simulate -o json` of an uploaded trace."""

    trace: Upload
    reserved: str
    wait: str = "0"
    queueing: Queueing = DEFAULT_QUEUEING
    packing: Packing = "gpu"
    gpus_per_node: int | None = None
    trace_format: str = "auto"
    scenario: str | None = None
    gpu: str | None = None  # which of the scenario's GPUs prices the replay (needed when it offers several)
    max_wait: str | None = None  # the waiting budget the recommended R meets, e.g. "p95=2h"
    catalog: str | None = None

    def run(self, inputs: Inputs) -> Any:
        from gpuplan import api

        trace = inputs.add(self.trace.name, self.trace.data)
        scen = inputs.add(SCENARIO_NAME, self.scenario.encode()) if self.scenario is not None else None
        result = api.simulate(trace, self.reserved, scenario=scen, wait=self.wait, queueing=self.queueing,
                              packing=self.packing, gpus_per_node=self.gpus_per_node,
                              trace_format=self.trace_format, gpu=self.gpu, max_wait=self.max_wait,
                              catalog=self.catalog)
        return inputs.unlabel(result.to_json())


@dataclass(frozen=True)
class AuditCall:
    """`audit -o json` of uploaded telemetry files."""

    files: tuple[Upload, ...]
    price: str | None = None
    currency: str = "USD"
    demand_mode: Literal["util", "busy"] | None = None  # also derive the hourly demand curve
    gpu_type: str | None = None
    offer: str | None = None  # price the idle time with this offer of `scenario` (audit --offer)
    scenario: str | None = None
    gpus_per_node: int | None = None  # splits a node price (audit --gpus-per-node)
    catalog: str | None = None

    def run(self, inputs: Inputs) -> Any:
        """The audit JSON; with `demand_mode`, as `audit --demand-out demand.csv` prints it plus the CSV's
        text under `demand_csv` (what the CLI writes to the file)."""
        from gpuplan import api

        paths = [inputs.add(f.name, f.data) for f in self.files]
        scen = inputs.add(SCENARIO_NAME, self.scenario.encode()) if self.scenario is not None else None
        report = api.audit(paths, price=self.price, currency=self.currency, catalog=self.catalog,
                           demand_mode=self.demand_mode, gpu_type=self.gpu_type, offer=self.offer, scenario=scen,
                           gpus_per_node=self.gpus_per_node)
        data = inputs.unlabel(report.to_json(DEMAND_NAME if report.demand is not None else None))
        if report.demand is not None:
            data["demand_csv"] = report.demand.csv
        return data


@dataclass(frozen=True)
class ExportCall:
    """`export TARGET PLAN.json` of a plan (the JSON /api/plan returned): the files, and the one stream."""

    target: Literal["kueue", "slurm", "volcano", "skypilot"]
    plan: str  # the plan JSON text
    name: str = "gpuplan"
    catalog: str | None = None

    def run(self, inputs: Inputs) -> Any:
        from gpuplan import api

        path = inputs.add(PLAN_NAME, self.plan.encode())
        result = api.export(self.target, path, name=self.name, catalog=self.catalog)
        return inputs.unlabel({"target": result.target, "stdout": result.stdout,
                               "files": [{"name": f.name, "text": f.text} for f in result.files]})


@dataclass(frozen=True)
class CommitCall:
    """`commit -o json` of a scenario text, or its HTML (the whole page, or the fragment the web page shows).
    `db` is the server's quotes database: its trend fills the drifts the scenario's `market:` leaves out."""

    scenario: str
    paths: int = 10_000
    seed: int = 0
    lang: Lang = "en"
    db: str | None = None
    report: Literal["none", "page", "fragment"] = "none"
    catalog: str | None = None

    def run(self, inputs: Inputs) -> Any:
        from gpuplan import api

        scen = inputs.add(SCENARIO_NAME, self.scenario.encode())
        rep = api.commit(scen, paths=self.paths, seed=self.seed, lang=self.lang, catalog=self.catalog, db=self.db)
        if self.report == "none":
            return inputs.unlabel(rep.to_json())
        from gpuplan.render.commit import commit_html

        page = commit_html(inputs.unlabel(rep.view), self.lang)
        return page if self.report == "page" else commit_fragment(page)


def commit_fragment(page: str) -> str:
    """The `<main>` the web page shows: the body of `render.commit.commit_html`'s page (its tables, the ladder
    timeline, the fan chart, the reasons), in the report's frame so that the page's report styles apply."""
    start, end = page.find("<body>"), page.rfind("</body>")
    body = page[start + len("<body>"):end] if start >= 0 and end > start else page
    return f'<main class="report commit-report" data-kind="commit">{body}</main>'


Call = PlanCall | SimulateCall | AuditCall | ExportCall | CommitCall


# --- inputs on disk, and their labels --------------------------------------------------------------

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def safe_name(name: str, index: int) -> str:
    """The client's file name as one harmless path component: its last part, no control characters,
    at most 200 bytes; `upload-N` when nothing usable is left."""
    base = re.split(r"[/\\]", name)[-1]
    base = _UNSAFE.sub("_", base)
    base = base.encode("utf-8", "ignore")[:200].decode("utf-8", "ignore")
    return f"upload-{index}" if base in ("", ".", "..") else base


class Inputs:
    """Files of one call in a private folder; `unlabel` turns their paths back into the client's names."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        prefix = re.escape(str(root))
        self._paths = re.compile(prefix + r"/upload-\d+/|" + prefix + "/?")

    def add(self, name: str, data: bytes) -> Path:
        folder = self.root / f"upload-{self.count}"
        folder.mkdir()
        path = folder / safe_name(name, self.count)
        self.count += 1
        path.write_bytes(data)
        return path

    def label(self, text: str) -> str:
        return self._paths.sub("", text) if str(self.root) in text else text

    def unlabel(self, data: Any) -> Any:
        """`data` (JSON-like) with every path of ours replaced by its label."""
        if isinstance(data, str):
            return self.label(data)
        if isinstance(data, dict):
            return {k: self.unlabel(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.unlabel(v) for v in data]
        return data


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def error_body(error: str, message: str, *, hint: str | None = None, field: str | None = None) -> bytes:
    return dumps({"error": error, "message": message, "file": None, "line": None, "field": field, "hint": hint})


def handle(call: Call, memory_bytes: int) -> tuple[int, bytes, bool]:
    """Run one call: (status, body, whether this worker should retire). Input errors are the CLI's
    `GpuplanError.to_dict()` (400 for a usage error, else 422); running out of memory is a 503."""
    import tempfile
    import traceback

    from gpuplan.errors import GpuplanError, UsageError

    with tempfile.TemporaryDirectory(prefix="gpuplan-web-") as tmp:
        inputs = Inputs(Path(tmp))
        try:
            out = call.run(inputs)
            return 200, out.encode() if isinstance(out, str) else dumps(out), False
        except GpuplanError as exc:
            return (400 if isinstance(exc, UsageError) else 422), dumps(inputs.unlabel(exc.to_dict())), False
        except MemoryError:
            # the heap may be fragmented or half-freed: answer, then let a fresh worker take over
            limit = f"{memory_bytes / 2**20:g} MiB" if memory_bytes > 0 else "the machine's"
            return 503, error_body("memory", f"the request needed more memory than this server allows ({limit})",
                                   hint="use a smaller input here, or run the command line."), True
        except RecursionError:
            return 422, error_body("input", "the input is nested too deeply"), False
        except (ValueError, TypeError, KeyError, IndexError, ArithmeticError, AttributeError) as exc:
            traceback.print_exc()
            return 422, error_body(
                "input", inputs.label(f"this input could not be processed: {type(exc).__name__}: {exc}"),
                hint="check the values; if they look right, please report it with the input."), False
        except Exception as exc:  # an internal error: logged (stderr is the server's), answered plainly
            traceback.print_exc()
            return 500, error_body("internal", inputs.label(f"internal error: {type(exc).__name__}: {exc}"),
                                   hint="please report it (the server log has the traceback)."), True


# --- the wire --------------------------------------------------------------------------------------

_LEN = struct.Struct(">Q")


def _send(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LEN.pack(len(data)) + data)
    stream.flush()


def _recv(stream: IO[bytes]) -> Any:
    """The next object, or None at the end of the stream."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)  # noqa: S301 - both ends of this pipe are this module


@dataclass(frozen=True)
class _Init:
    memory_bytes: int


def main() -> None:
    """A worker: read calls from stdin, answer on the original stdout, until stdin closes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal is the server's to handle
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print() in an engine must not corrupt the answers
    sys.stdout = sys.stderr
    init = _recv(requests)
    if not isinstance(init, _Init):
        return
    if init.memory_bytes > 0:
        import resource

        # RLIMIT_DATA counts what a call can fill (heap, anonymous mappings: numpy and polars buffers),
        # not address space merely reserved (shared libraries, thread stacks, malloc arenas), which
        # grows with the number of cores and would make RLIMIT_AS refuse idle workers on a big machine.
        resource.setrlimit(resource.RLIMIT_DATA, (init.memory_bytes, init.memory_bytes))
    while True:
        call = _recv(requests)
        if call is None:
            return
        status, body, retire = handle(call, init.memory_bytes)
        _send(answers, (status, body, retire))
        if retire:
            return


# --- the pool (server side) ---------------------------------------------------------------------------


class _Worker:
    def __init__(self, memory_bytes: int) -> None:
        env = dict(os.environ)
        # the worker imports the same gpuplan as the server, wherever it was imported from
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed command line; requests travel as pickles
            [sys.executable, "-m", "gpuplan.web.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, close_fds=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        _send(self.stdin, _Init(memory_bytes))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, call: Call) -> tuple[int, bytes, bool]:
        _send(self.stdin, call)
        reply = _recv(self.stdout)
        if reply is None:
            raise EOFError("the worker stopped")
        status, body, retire = reply
        return int(status), bytes(body), bool(retire)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()

    def close(self) -> None:
        """Kill and reap (only from the thread that talks to it, or once nothing does)."""
        self.kill()
        self.proc.wait()
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                stream.close()


class Job:
    """One call handed to the pool; `future` gives its reply."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.lock = threading.Lock()
        self.worker: _Worker | None = None
        self.abandoned = False
        self.future: Future[Reply] = Future()


def _kill_all(workers: set[_Worker]) -> None:
    for w in list(workers):
        w.kill()


class HeavyPool:
    """At most `size` calls at a time, each in a worker process; more wait their turn."""

    def __init__(self, size: int, memory_bytes: int) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="gpuplan-heavy")
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        # workers die with the pool (an app dropped without shutdown, as in tests)
        self._finalizer = weakref.finalize(self, _kill_all, self._all)

    def submit(self, call: Call) -> Job:
        job = Job(call)
        job.future = self._threads.submit(self._run, job)
        return job

    def abandon(self, job: Job) -> bool:
        """Give up on `job`: kill its worker if it runs (True), else drop it from the queue (False)."""
        with job.lock:
            job.abandoned = True
            if job.worker is not None:
                job.worker.kill()
                return True
        job.future.cancel()
        return False

    def workers(self) -> int:
        """Worker processes alive now."""
        with self._lock:
            return sum(1 for w in self._all if w.alive())

    def close(self) -> None:
        """Stop every worker: idle ones are reaped here, busy ones by the thread waiting on them."""
        self._threads.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            idle, self._idle = self._idle, []
            self._all.difference_update(idle)
        for w in idle:
            w.close()
        _kill_all(self._all)

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
                self._all.discard(w)
        w = _Worker(self.memory_bytes)
        with self._lock:
            self._all.add(w)
        return w

    def _drop(self, w: _Worker) -> None:
        with self._lock:
            self._all.discard(w)
        w.close()

    def _run(self, job: Job) -> Reply:
        with job.lock:
            if job.abandoned:
                return 503, error_body("busy", "abandoned")
            worker = job.worker = self._take()
        try:
            status, body, retire = worker.call(job.call)
        except (EOFError, OSError, pickle.PickleError):
            self._drop(worker)
            limit = f" (memory limit: {self.memory_bytes / 2**20:g} MiB)" if self.memory_bytes > 0 else ""
            return 503, error_body(
                "worker", "the engine process stopped before it answered: it may have run out of memory" + limit,
                hint="use a smaller input here, or run the command line.")
        with job.lock:
            job.worker = None
            abandoned = job.abandoned
        if retire or abandoned:
            self._drop(worker)
        else:
            with self._lock:
                self._idle.append(worker)
        return status, body


if __name__ == "__main__":
    # run the imported module's main, so that unpickled calls and this loop share one set of classes
    from gpuplan.web.worker import main as _main

    _main()
