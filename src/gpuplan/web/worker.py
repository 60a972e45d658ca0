"""Heavy web requests (plan, simulate, audit, export, commit, their reports) run in worker processes,
through `gpuplan.api`.

Each request becomes a typed call (a frozen dataclass below, pickled; never a command line) that a
worker runs in-process with the api. The workers are pebble's `ProcessPool` (spawned interpreters that
live across requests): a call past its time limit is stopped by pebble killing its worker (a thread
cannot be stopped), and each worker has its own memory bound (`RLIMIT_DATA`, set by the pool's
initializer). Pebble replaces a killed or crashed worker by itself.

Uploads are written into a private temporary folder per call, each in its own generated folder
(`upload-0/`, `upload-1/`, ...) under its client name reduced to one safe path component: the name is a
label (nvidia-smi logs without a hostname column name their node after the file, as on the CLI), the
path is ours. Every answer and error maps those paths back to the labels.
"""

from __future__ import annotations

import json
import logging
import re
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
        from gpuplan.render.html import render_report

        page = render_report("commit", inputs.unlabel(rep.view), self.lang)
        return page if self.report == "page" else commit_fragment(page)


def commit_fragment(page: str) -> str:
    """The `<main>` the web page shows: the `<main>` of the commit report's page (`render.html`: its tables,
    the ladder timeline, the fan chart, the reasons), one element in the reports' frame and styles."""
    start, end = page.find("<main"), page.rfind("</main>")
    if start < 0 or end < start:
        raise ValueError("the commit report has no <main> element")
    head_end = page.index(">", start)
    return '<main class="report commit-report" data-kind="commit"' + page[head_end:end] + "</main>"


@dataclass(frozen=True)
class PackCall:
    """The decision pack (`gpuplan report`) of a scenario text: the whole page, or its `<main>` for the page.
    `db` is the server's quotes database, as for `CommitCall`."""

    scenario: str
    paths: int = 10_000
    seed: int = 0
    lang: Lang = "en"
    db: str | None = None
    report: Literal["page", "fragment"] = "page"
    catalog: str | None = None

    def run(self, inputs: Inputs) -> Any:
        from gpuplan import api
        from gpuplan.render.pack import pack_html

        scen = inputs.add(SCENARIO_NAME, self.scenario.encode())
        pack = api.report(scen, paths=self.paths, seed=self.seed, lang=self.lang, catalog=self.catalog, db=self.db)
        return inputs.unlabel(pack_html(pack, self.lang, fragment=self.report == "fragment"))


Call = PlanCall | SimulateCall | AuditCall | ExportCall | CommitCall | PackCall


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


def handle(call: Call, memory_bytes: int = 0) -> Reply:
    """Run one call in this process: (status, body). The web's one error mapping (`gpuplan.web.errors`), on
    this side of the pipe: input errors are the CLI's `GpuplanError.to_dict()` (400 for a usage error, else
    422); running out of memory is a 503; anything else is a bug, a 500 "internal error" and one log line."""
    import tempfile

    from gpuplan.errors import GpuplanError, UsageError
    from gpuplan.web.errors import INTERNAL, internal

    with tempfile.TemporaryDirectory(prefix="gpuplan-web-") as tmp:
        inputs = Inputs(Path(tmp))
        try:
            out = call.run(inputs)
            return 200, out.encode() if isinstance(out, str) else dumps(out)
        except GpuplanError as exc:
            return (400 if isinstance(exc, UsageError) else 422), dumps(inputs.unlabel(exc.to_dict()))
        except MemoryError:
            limit = f"{memory_bytes / 2**20:g} MiB" if memory_bytes > 0 else "the machine's"
            return 503, error_body("memory", f"the request needed more memory than this server allows ({limit})",
                                   hint="use a smaller input here, or run the command line.")
        except RecursionError:  # a reader handed a structure nested past Python's stack: the input's depth
            return 422, error_body("input", "the input is nested too deeply")
        except Exception as exc:
            internal(type(call).__name__, exc)
            return 500, dumps(INTERNAL)


# --- the pool (server side) ---------------------------------------------------------------------------


def _limit_memory(memory_bytes: int) -> None:
    """A worker's initializer: bound what its calls can fill. RLIMIT_DATA counts heap and anonymous mappings
    (numpy and polars buffers), not address space merely reserved (shared libraries, thread stacks, malloc
    arenas), which grows with the number of cores and would make RLIMIT_AS refuse idle workers."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal is the server's to handle
    logging.basicConfig(level=logging.WARNING, format="gpuplan worker: %(levelname)s %(message)s")
    if memory_bytes > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))


class HeavyPool:
    """At most `size` calls at a time, each in a worker process of a pebble `ProcessPool` (started on first
    use); more wait their turn. `submit` gives a future of the (status, body) reply; cancelling it stops
    the call, killing its worker if it runs. Pebble stops a call at `timeout_s` of running by itself."""

    def __init__(self, size: int, memory_bytes: int, timeout_s: float | None = None) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self.timeout_s = timeout_s
        self._pool: Any = None

    def submit(self, call: Call) -> Future[Reply]:
        if self._pool is None:
            import multiprocessing

            from pebble import ProcessPool

            # spawned, not forked: a worker starts from a clean interpreter (not a copy of the server's
            # threads and heap), and its memory bound covers only what its calls allocate
            self._pool = ProcessPool(max_workers=self.size, initializer=_limit_memory, initargs=(self.memory_bytes,),
                                     context=multiprocessing.get_context("spawn"))
        fut: Future[Reply] = self._pool.schedule(handle, args=(call, self.memory_bytes), timeout=self.timeout_s)
        fut.gpuplan_started = time.monotonic()  # type: ignore[attr-defined]  # tells pebble's time-out from a wedge
        return fut

    def reply(self, fut: Future[Reply]) -> Reply:
        """The reply of a finished future: its own, or 503 for a call pebble stopped or whose worker died."""
        from concurrent.futures import TimeoutError as FutureTimeout

        from pebble import ProcessExpired

        try:
            return fut.result()
        except FutureTimeout:
            # TimeoutError is also what a worker that wedged on its memory bound ends in (its MemoryError
            # outside the call, in pebble's own plumbing): only a call that ran its time is a time-out
            ran = time.monotonic() - getattr(fut, "gpuplan_started", 0.0)
            if self.timeout_s is not None and ran >= 0.9 * self.timeout_s:
                return 503, error_body("timeout", f"the request took longer than {self.timeout_s:g} s",
                                       hint="use a smaller input here, or run the command line.")
            return self._died()
        except ProcessExpired:
            return self._died()

    def _died(self) -> Reply:
        limit = f" (memory limit: {self.memory_bytes / 2**20:g} MiB)" if self.memory_bytes > 0 else ""
        return 503, error_body(
            "worker", "the engine process stopped before it answered: it may have run out of memory" + limit,
            hint="use a smaller input here, or run the command line.")

    def workers(self) -> int:
        """Worker processes alive now."""
        if self._pool is None:
            return 0
        return sum(1 for w in self._pool._pool_manager.worker_manager.workers.values() if w.is_alive())

    def close(self) -> None:
        """Stop every worker (a running call is killed) and wait for them."""
        if self._pool is not None:
            self._pool.stop()
            self._pool.join(timeout=10)
