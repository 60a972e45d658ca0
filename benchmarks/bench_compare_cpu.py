"""Where one uncached `/api/compare` spends its CPU (not a test): the seed example made distinct per
request (its own hours per day, as bench_serve.py's uncached phase does), each stage timed in process with
`time.process_time`, median of 5 rounds of 300 distinct scenarios, after the server's warm-up and heap
freeze. The last line is the whole request through the ASGI app (edge, routing, body, cache, response),
without sockets.

    .venv/bin/python benchmarks/bench_compare_cpu.py
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "examples" / "seed-910b.yaml").read_text(encoding="utf-8")
N, ROUNDS = 300, 5


def scenario(i: int) -> str:
    return SEED.replace("hours_per_day: 6", f"hours_per_day: {1 + (i % 2300) / 100:.2f}", 1) + f"\n# request {i}\n"


def main() -> None:
    from gpuplan import api
    from gpuplan.inputs.scenario import scenario_from_text
    from gpuplan.render.compare import compare_json
    from gpuplan.web.app import create_app, freeze_heap, warm_up
    from gpuplan.web.runtime import dumps

    app = create_app()
    warm_up(app)
    freeze_heap()
    cat = app.state.catalog
    stages: dict[str, list[float]] = {k: [] for k in ("parse", "engine", "document", "json", "request")}

    async def request(body: bytes) -> int:
        sent: list[dict[str, Any]] = []
        msgs = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return msgs.pop() if msgs else {"type": "http.disconnect"}

        async def send(m: dict[str, Any]) -> None:
            sent.append(m)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/compare", "raw_path": b"/api/compare", "query_string": b"",
                 "root_path": "", "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80),
                 "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())]}
        await app(scope, receive, send)
        return int(sent[0]["status"])

    for r in range(ROUNDS):
        texts = [scenario(r * 10 * N + i) for i in range(N)]
        t = time.process_time()
        scens = [scenario_from_text(s, "scenario.yaml", cat) for s in texts]
        stages["parse"].append(time.process_time() - t)
        t = time.process_time()
        results = [api.compare(s, catalog=cat) for s in scens]
        stages["engine"].append(time.process_time() - t)
        t = time.process_time()
        docs = [res.document("en") for res in results]
        stages["document"].append(time.process_time() - t)
        t = time.process_time()
        for d in docs:
            dumps(compare_json(d))
        stages["json"].append(time.process_time() - t)
        del scens, results, docs  # else every collection during the requests walks them
        gc.collect()
        bodies = [json.dumps({"scenario": scenario(r * 10 * N + 5 * N + i)}).encode() for i in range(N)]

        async def all_of(bodies: list[bytes]) -> float:
            t = time.process_time()
            for b in bodies:
                assert await request(b) == 200
            return time.process_time() - t

        stages["request"].append(asyncio.run(all_of(bodies)))
    parts = 0.0
    for k, v in stages.items():
        ms = statistics.median(v) / N * 1000
        if k != "request":
            parts += ms
        print(f"{k:>9}: {ms:.3f} ms CPU per compare" + (f"  (stages above: {parts:.3f} ms)" if k == "request" else ""))


if __name__ == "__main__":
    main()
