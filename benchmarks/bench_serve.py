"""Load benchmark for `gpuplan serve` (not a test).

Starts a real server (`gpuplan serve`, uvicorn) on 127.0.0.1 at a free port, then, from a SEPARATE client
process, sends 5,000 mixed requests at 50 concurrent keep-alive connections: valid compares of the seed
example (en and zh), health and catalog reads, form edits, and malformed bodies (not JSON, wrong types, a
broken scenario, bad YAML, an oversized body). Prints p50/p99 latency per kind and overall, the count of
5xx answers, and the CPU seconds the client and the server used.

The client is deliberately lean (raw asyncio protocol, HTTP/1.1 keep-alive, no HTTP library): a Python
HTTP client such as httpx costs about as much CPU per request as the server does, and on a small machine
it steals the server's cores and inflates every latency it measures.

Baseline measured in the same run: the same number of GET /api/health requests at the same concurrency
(the framework's floor: no body, no engine), before the mixed load.

Two phases, each reported on its own: "cached" repeats the seed scenario (after the warm-up the
server's answer cache serves every compare), "uncached" makes every compare a distinct scenario (the
seed with its own hours per day, so each is computed).

Goals: zero 5xx; p99 of /api/compare under 100 ms on uncached, distinct scenarios (issue 15).

    .venv/bin/python benchmarks/bench_serve.py [--requests 5000] [--concurrency 50] [--unique]
                                               [--workers 1] [--wrk]

`--wrk` adds a cross-check with Debian's `wrk` (a C load generator; the same mix through a Lua script);
it is skipped, with a message, when `wrk` is not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "examples" / "seed-910b.yaml").read_text(encoding="utf-8")
MAX_BODY_MB = 1.0

# (kind, method, path, body, weight): half valid compares, the rest reads, edits and malformed input
MIX: list[tuple[str, str, str, bytes | None, int]] = [
    ("compare", "POST", "/api/compare", json.dumps({"scenario": SEED}).encode(), 25),
    ("compare", "POST", "/api/compare", json.dumps({"scenario": SEED, "lang": "zh"}).encode(), 25),
    ("health", "GET", "/api/health", None, 8),
    ("catalog", "GET", "/api/catalog", None, 4),
    ("bad-json", "POST", "/api/compare", b"{not json", 8),
    ("bad-type", "POST", "/api/compare", json.dumps({"scenario": 5}).encode(), 8),
    ("bad-scenario", "POST", "/api/compare",
     json.dumps({"scenario": SEED.replace("gpus: 4", "gpus: -1", 1)}).encode(), 8),
    ("bad-yaml", "POST", "/api/compare", json.dumps({"scenario": "offers: [\n"}).encode(), 6),
    ("too-large", "POST", "/api/compare", b"x" * (int(MAX_BODY_MB * 1024 * 1024) + 1), 2),
    ("edit", "POST", "/api/scenario/edit",
     json.dumps({"scenario": SEED, "set": {"workloads[0].hours_per_day": 12}}).encode(), 6),
]


def raw_request(method: str, path: str, body: bytes | None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + (body or b"")


# --- the client (runs in its own process) ---------------------------------------------------------


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; one request in flight at a time."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.transport: Any = None
        self.waiter: asyncio.Future[tuple[int, bool]] | None = None
        self.closed = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._check()

    def _check(self) -> None:
        w = self.waiter
        if w is None or w.done():
            return
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = bytes(self.buf[:end]).split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length, close = 0, False
        for line in lines[1:]:
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"connection" and v.strip().lower() == b"close":
                close = True
        if len(self.buf) < end + 4 + length:
            return
        del self.buf[: end + 4 + length]
        w.set_result((status, close))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        w = self.waiter
        if w is not None and not w.done():
            w.set_exception(ConnectionError(f"connection lost: {exc}"))

    async def request(self, raw: bytes) -> tuple[int, bool]:
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(raw)
        return await self.waiter


async def _connect(port: int) -> _Conn:
    loop = asyncio.get_running_loop()
    _, proto = await loop.create_connection(_Conn, "127.0.0.1", port)
    return proto


async def _load(port: int, plan: list[tuple[str, bytes]], conc: int) -> dict[str, Any]:
    lat: dict[str, list[float]] = defaultdict(list)
    codes: Counter[int] = Counter()
    errors: Counter[str] = Counter()
    reconnects = 0
    it = iter(plan)
    conns = [await _connect(port) for _ in range(conc)]  # connected before the clock starts

    async def worker(c: _Conn) -> None:
        nonlocal reconnects
        for kind, raw in it:
            if c.closed:
                c.transport.close()
                c = await _connect(port)
                reconnects += 1
            t0 = time.perf_counter()
            try:
                status, close = await c.request(raw)
            except ConnectionError as exc:
                errors[f"{kind}: {type(exc).__name__}"] += 1
                c.closed = True
                continue
            lat[kind].append((time.perf_counter() - t0) * 1000)
            codes[status] += 1
            if close:
                c.closed = True
        c.transport.close()

    cpu0, t0 = os.times(), time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    wall, cpu1 = time.perf_counter() - t0, os.times()
    return {"lat": lat, "codes": dict(codes), "errors": dict(errors), "wall": wall, "reconnects": reconnects,
            "cpu": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)}


def client_main(port: int, n: int, conc: int, seed: int, unique: bool, only: str | None) -> None:
    """Entry of the client process: runs the load, prints its results as one JSON line."""
    rnd = random.Random(seed)
    mix = [m for m in MIX if only is None or m[0] == only]
    picks = rnd.choices(mix, weights=[m[4] for m in mix], k=n)
    plan: list[tuple[str, bytes]] = []
    for i, (kind, method, path, body, _w) in enumerate(picks):
        if unique and kind == "compare" and body is not None:  # a distinct scenario: other hours, other answer
            d = json.loads(body)
            hours = f"hours_per_day: {1 + (i % 2300) / 100:.2f}"
            d["scenario"] = d["scenario"].replace("hours_per_day: 6", hours, 1) + f"\n# request {i}\n"
            body = json.dumps(d).encode()
        plan.append((kind, raw_request(method, path, body)))
    out = asyncio.run(_load(port, plan, conc))
    sys.stdout.write(json.dumps(out) + "\n")


# --- the driver ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of these processes (Linux /proc; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def server_pids(pid: int) -> list[int]:
    """The server process and its children (uvicorn's workers with --workers N)."""
    pids = [pid]
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            pids += server_pids(int(child))
    except OSError:
        pass
    return pids


def get(port: int, path: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(raw_request("GET", path, None).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def post(port: int, path: str, body: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(raw_request("POST", path, body).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def run_client(port: int, a: argparse.Namespace, n: int, only: str | None, server: list[int]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--_client", str(port), "--requests", str(n), "--concurrency",
           str(a.concurrency), "--seed", str(a.seed)]
    if a.unique:
        cmd.append("--unique")
    if a.pin_client:
        cmd += ["--pin-client", a.pin_client]
    if only:
        cmd += ["--_only", only]
    s0 = proc_cpu(server)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    res["server_cpu"] = proc_cpu(server) - s0
    return res


def cpus(spec: str) -> set[int]:
    """`0,2-3` -> {0, 2, 3}."""
    out: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def report(title: str, res: dict[str, Any], n: int) -> None:
    lat, wall = res["lat"], res["wall"]
    every = [x for v in lat.values() for x in v]
    print(f"\n{title}: {n} requests, {res['wall']:.2f} s wall, {n / wall:.0f} req/s; CPU: client "
          f"{res['cpu']:.1f} s ({res['cpu'] / wall:.0%} of a core), server {res['server_cpu']:.1f} s "
          f"({res['server_cpu'] / wall:.0%} of a core; {res['server_cpu'] / n * 1000:.2f} ms per request)")
    print(f"  {'kind':<14}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind in sorted(lat):
        v = lat[kind]
        print(f"  {kind:<14}{len(v):>6}{statistics.median(v):>10.1f}{pct(v, 99):>10.1f}{max(v):>10.1f}")
    if len(lat) > 1:
        print(f"  {'all':<14}{len(every):>6}{statistics.median(every):>10.1f}{pct(every, 99):>10.1f}"
              f"{max(every):>10.1f}")
    print(f"  status codes: {dict(sorted((int(k), v) for k, v in res['codes'].items()))}; reconnects "
          f"{res['reconnects']}; connection errors {sum(res['errors'].values())} {res['errors'] or ''}")


WRK_LUA = """
local reqs = {}
local kinds = {}
function init(args)
  local f = io.open(args[1], "r")
  for line in f:lines() do
    local kind, method, path, file = line:match("^(%S+) (%S+) (%S+) ?(%S*)$")
    local body = nil
    if file ~= "" then local b = io.open(file, "rb"); body = b:read("*a"); b:close() end
    local hdr = {}
    if body then hdr["Content-Type"] = "application/json" end
    table.insert(reqs, wrk.format(method, path, hdr, body))
  end
  f:close()
  counter = 0
end
function request()
  counter = counter + 1
  return reqs[(counter % #reqs) + 1]
end
"""


def run_wrk(port: int, a: argparse.Namespace) -> list[str]:
    """Cross-check with wrk (C): the same weighted mix, as a fixed cycle of requests, for the same number
    of seconds; wrk reports one latency distribution for the whole mix, not one per kind."""
    exe = shutil.which("wrk")
    if exe is None:
        return ["wrk: skipped (wrk is not installed; `apt-get install wrk` adds this cross-check)"]
    lines_out = []
    rnd = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        lines = []
        for i, (kind, method, path, body, _w) in enumerate(rnd.choices(MIX, weights=[m[4] for m in MIX], k=200)):
            if kind == "too-large":  # wrk keeps the connection and does not handle the server closing it well
                continue
            f = ""
            if body is not None:
                f = str(Path(tmp, f"b{i}"))
                Path(f).write_bytes(body)
            lines.append(f"{kind} {method} {path} {f}".rstrip())
        Path(tmp, "reqs.txt").write_text("\n".join(lines) + "\n")
        Path(tmp, "mix.lua").write_text(WRK_LUA)
        for label, script in (("health", None), ("mixed (no oversized bodies)", "mix.lua")):
            cmd = [exe, "-t", "1", "-c", str(a.concurrency), "-d", "5s", "--latency"]
            if script:
                cmd += ["-s", str(Path(tmp, script)), f"http://127.0.0.1:{port}/", "--", str(Path(tmp, "reqs.txt"))]
            else:
                cmd.append(f"http://127.0.0.1:{port}/api/health")
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
            keep = [ln for ln in out.splitlines() if ln.strip().startswith(("50%", "99%", "Requests/sec", "Non-2xx"))]
            summary = "; ".join(" ".join(k.split()) for k in keep)
            lines_out.append(f"wrk -t1 -c{a.concurrency} -d5s, {label}: {summary}")
    return lines_out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--unique", action="store_true",
                    help="only the uncached phase (every compare a distinct scenario: the cache never hits)")
    ap.add_argument("--cached-only", action="store_true", help="only the cached phase (repeated scenarios)")
    ap.add_argument("--workers", type=int, default=0,
                    help="`gpuplan serve --workers N` (0: the server's default, one per usable core up to 4)")
    ap.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for `gpuplan serve` (repeatable), e.g. --serve-arg=--inline-max-kb=0")
    ap.add_argument("--wrk", action="store_true", help="also run the cross-check with wrk (skipped if absent)")
    ap.add_argument("--server-cmd", metavar="CMD", help="the command that starts the server, without `serve` and "
                    "its options (default: this venv's `gpuplan`), e.g. a wrapper that changes one thing, for A/B runs")
    ap.add_argument("--pin-server", metavar="CPUS", help="run the server (and its workers) on these CPUs only, "
                    "e.g. 1 or 0,1 (Linux; the client is pinned apart with --pin-client)")
    ap.add_argument("--pin-client", metavar="CPUS", help="run the load client on these CPUs only, e.g. 0")
    ap.add_argument("--_client", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--_only", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._client:
        if a.pin_client:
            os.sched_setaffinity(0, cpus(a.pin_client))
        client_main(a._client, a.requests, a.concurrency, a.seed, a.unique, a._only)
        return 0

    port = free_port()
    exe = a.server_cmd.split() if a.server_cmd else [str(Path(sys.executable).with_name("gpuplan"))]
    cmd = [*exe, "serve", "--port", str(port), "--max-body-mb", str(MAX_BODY_MB)]
    if a.workers:
        cmd += ["--workers", str(a.workers)]
    else:  # what `gpuplan serve` picks by default (cli/serve.py auto_workers), for the derived figures below
        a.workers = max(1, min(len(cpus(a.pin_server)) if a.pin_server else len(os.sched_getaffinity(0)), 4))
    cmd += a.serve_arg
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if a.pin_server:  # before it imports anything: its threads and uvicorn's workers inherit the mask
        os.sched_setaffinity(proc.pid, cpus(a.pin_server))
    try:
        for _ in range(300):
            try:
                if get(port, "/api/health") == 200:
                    break
            except OSError:
                time.sleep(0.05)
        else:
            print("server did not start", file=sys.stderr)
            return 1
        # warm-up (imports, caches), not counted
        for _ in range(20 * a.workers):
            post(port, "/api/compare", json.dumps({"scenario": SEED}).encode())
            post(port, "/api/compare", json.dumps({"scenario": SEED, "lang": "zh"}).encode())
        pids = server_pids(proc.pid)
        base = run_client(port, a, a.requests, "health", pids)
        phases: dict[str, dict[str, Any]] = {}
        for unique in (False, True):
            if (unique and a.cached_only) or (not unique and a.unique):
                continue
            phases["uncached" if unique else "cached"] = run_client(
                port, argparse.Namespace(**{**vars(a), "unique": unique}), a.requests, None, pids)
        wrk = run_wrk(port, a) if a.wrk else []
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    pinned = (f"server on CPUs {a.pin_server or 'any'}, client on CPUs {a.pin_client or 'any'} of {os.cpu_count()}"
              if a.pin_server or a.pin_client else f"{os.cpu_count()} CPUs shared by client and server")
    print(f"gpuplan serve load: {a.concurrency} concurrent keep-alive connections, server workers {a.workers}"
          f"{'; serve ' + ' '.join(a.serve_arg) if a.serve_arg else ''}"
          f"{'; server command ' + a.server_cmd if a.server_cmd else ''}; {pinned}")
    report("baseline GET /api/health", base, a.requests)
    hp50 = statistics.median(base["lat"]["health"])
    n5 = 0
    errors = 0
    for name, res in phases.items():
        what = ("every compare a distinct scenario: no cache hits" if name == "uncached"
                else "the seed scenario repeated: the server's cache answers")
        report(f"mixed, {name} ({what})", res, a.requests)
        n5 += sum(c for s, c in res["codes"].items() if int(s) >= 500)
        errors += sum(res["errors"].values())
    print(f"\n5xx: {n5} (goal 0)")
    for name, res in phases.items():
        lat = res["lat"]["compare"]
        print(f"{name:>8}: /api/compare p50 {statistics.median(lat):.1f} ms, p99 {pct(lat, 99):.1f} ms"
              f"{' (goal < 100 ms)' if name == 'uncached' else ''}; p50 = {statistics.median(lat) / hp50:.1f}x the "
              f"health-only p50 ({hp50:.1f} ms); throughput mixed / health-only = "
              f"{(a.requests / res['wall']) / (a.requests / base['wall']):.2f}")
    for name, res in phases.items():
        per = res["server_cpu"] / a.requests * 1000
        share = res["server_cpu"] / res["wall"] / a.workers
        print(f"{name:>8}: derived, not measured: the server used {per:.2f} ms of CPU per request and got "
              f"{share:.0%} of each worker's core; with {a.workers} core(s) to itself, {a.concurrency} connections "
              f"would queue ~{a.concurrency * per / a.workers:.0f} ms at the median")
    for line in wrk:
        print(line)
    return 0 if n5 == 0 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
