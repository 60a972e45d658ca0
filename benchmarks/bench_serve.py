"""Load benchmark for `gpuplan serve` (not a test).

Starts a real server (`gpuplan serve`, uvicorn) on 127.0.0.1 at a free port, then sends 5,000 mixed
requests at 50 concurrent connections with httpx.AsyncClient: valid compares of the seed example,
health and catalog reads, and malformed bodies (not JSON, wrong types, a broken scenario, an
oversized body). Prints p50/p99 latency per kind and overall, and the count of 5xx answers.

Goals: zero 5xx; p99 of /api/compare on the seed example under 100 ms.
Baseline measured in the same run: GET /api/health (the server's floor for one request).

    .venv/bin/python benchmarks/bench_serve.py [--requests 5000] [--concurrency 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "examples" / "seed-910b.yaml").read_text(encoding="utf-8")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mix() -> tuple[list[tuple[str, str, str, bytes | None]], str]:
    """(kind, method, path, body) — weights: 50% valid compare, the rest reads and malformed input."""
    j = "application/json"
    return [
        ("compare", "POST", "/api/compare", json.dumps({"scenario": SEED}).encode()),
        ("compare", "POST", "/api/compare", json.dumps({"scenario": SEED, "lang": "zh"}).encode()),
        ("health", "GET", "/api/health", None),
        ("catalog", "GET", "/api/catalog", None),
        ("bad-json", "POST", "/api/compare", b"{not json"),
        ("bad-type", "POST", "/api/compare", json.dumps({"scenario": 5}).encode()),
        ("bad-scenario", "POST", "/api/compare", json.dumps({"scenario": SEED.replace("gpus: 4", "gpus: -1", 1)})
         .encode()),
        ("bad-yaml", "POST", "/api/compare", json.dumps({"scenario": "offers: [\n"}).encode()),
        ("too-large", "POST", "/api/compare", b"x" * (1024 * 1024 + 1)),
        ("edit", "POST", "/api/scenario/edit",
         json.dumps({"scenario": SEED, "set": {"workloads[0].hours_per_day": 12}}).encode()),
    ], j


async def run(base: str, n: int, conc: int, seed: int, unique: bool = False
              ) -> tuple[dict[str, list[float]], Counter[int], float]:
    reqs, ctype = mix()
    weights = [25, 25, 8, 4, 8, 8, 8, 6, 2, 6]
    rnd = random.Random(seed)
    plan = rnd.choices(reqs, weights=weights, k=n)
    lat: dict[str, list[float]] = defaultdict(list)
    codes: Counter[int] = Counter()
    queue: asyncio.Queue[tuple[str, str, str, bytes | None]] = asyncio.Queue()
    for i, item in enumerate(plan):
        if unique and item[0] == "compare":
            body = json.loads(item[3] or b"{}")
            body["scenario"] += f"\n# request {i}\n"
            item = (*item[:3], json.dumps(body).encode())
        queue.put_nowait(item)
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:

        async def worker() -> None:
            while True:
                try:
                    kind, method, path, body = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t0 = time.perf_counter()
                r = await client.request(method, path, content=body,
                                         headers={"content-type": ctype} if body is not None else None)
                lat[kind].append((time.perf_counter() - t0) * 1000)
                codes[r.status_code] += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        wall = time.perf_counter() - t0
    return lat, codes, wall


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--unique", action="store_true",
                    help="make every compare's scenario text unique (a comment), so the server's cache never hits")
    a = ap.parse_args()

    port = free_port()
    exe = Path(sys.executable).with_name("gpuplan")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port), "--max-body-mb", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        else:
            print("server did not start", file=sys.stderr)
            return 1
        # warm-up (imports, caches), not counted
        for _ in range(20):
            httpx.post(base + "/api/compare", json={"scenario": SEED}, timeout=30)
        lat, codes, wall = asyncio.run(run(base, a.requests, a.concurrency, a.seed, a.unique))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    every = [x for v in lat.values() for x in v]
    print(f"gpuplan serve load: {a.requests} requests, {a.concurrency} concurrent connections, "
          f"{'every compare unique (no cache hits)' if a.unique else 'repeated scenarios (cache hits)'}, "
          f"{wall:.1f} s wall, {a.requests / wall:.0f} req/s")
    print(f"{'kind':<14}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind in sorted(lat):
        v = lat[kind]
        print(f"{kind:<14}{len(v):>6}{statistics.median(v):>10.1f}{pct(v, 99):>10.1f}{max(v):>10.1f}")
    print(f"{'all':<14}{len(every):>6}{statistics.median(every):>10.1f}{pct(every, 99):>10.1f}{max(every):>10.1f}")
    print("status codes:", dict(sorted(codes.items())))
    n5 = sum(c for s, c in codes.items() if s >= 500)
    p99c = pct(lat["compare"], 99)
    base_p50 = statistics.median(lat["health"])
    print(f"5xx: {n5} (goal 0)")
    print(f"p99 /api/compare (seed): {p99c:.1f} ms (goal < 100 ms); "
          f"p50 compare / p50 health = {statistics.median(lat['compare']) / base_p50:.1f}x")
    return 0 if n5 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
