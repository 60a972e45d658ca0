"""`gpuplan serve` warms up before it listens: what a compare needs is imported and built at start-up (and so
frozen out of the garbage collector's view with the rest), not by the first requests."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from web_inputs import HYBRID, SEED  # noqa: E402

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from gpuplan.web import create_app  # noqa: E402
from gpuplan.web.app import warm_up  # noqa: E402


def test_after_warm_up_a_compare_imports_nothing() -> None:
    """In a fresh interpreter (this one has imported everything already): after `warm_up`, compares and
    reports of other scenarios, in both languages, load no module the start-up did not."""
    code = textwrap.dedent(f"""
        import sys
        from fastapi.testclient import TestClient
        from gpuplan.web import create_app
        from gpuplan.web.app import warm_up

        app = create_app()
        warm_up(app)
        with TestClient(base_url="http://127.0.0.1", app=app) as client:
            before = set(sys.modules)
            for path in ({str(SEED)!r}, {str(HYBRID)!r}):
                text = open(path, encoding="utf-8").read()
                for lang in ("en", "zh"):
                    assert client.post("/api/compare", json={{"scenario": text, "lang": lang}}).status_code == 200
                    r = client.post("/api/report", json={{"scenario": text, "lang": lang, "fragment": True}})
                    assert r.status_code == 200
            assert client.get("/?lang=zh").status_code == 200
            print(sorted(set(sys.modules) - before))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"imported by the first requests, not at start-up: {out.stdout}"


def test_warm_up_leaves_the_answers_alone() -> None:
    """Warming up caches nothing the answers depend on: the same bytes as an app that never warmed up."""
    cold, warm = create_app(), create_app()
    warm_up(warm)
    gc.collect()
    text = SEED.read_text(encoding="utf-8")
    with TestClient(base_url="http://127.0.0.1", app=cold) as c, TestClient(base_url="http://127.0.0.1", app=warm) as w:
        for lang in ("en", "zh"):
            a = c.post("/api/compare", json={"scenario": text, "lang": lang})
            b = w.post("/api/compare", json={"scenario": text, "lang": lang})
            assert (a.status_code, a.content) == (b.status_code, b.content) == (200, a.content)
            assert c.get(f"/?lang={lang}").content == w.get(f"/?lang={lang}").content


def test_distinct_compares_read_no_file() -> None:
    """Everything a compare needs that does not depend on the scenario (catalog, message catalogs, templates)
    is read once: after the first request, distinct compares open no file and start no process (an audit
    hook sees every `open`, in a fresh interpreter since a hook cannot be removed)."""
    code = textwrap.dedent(f"""
        import sys
        from fastapi.testclient import TestClient
        from gpuplan.web import create_app
        from gpuplan.web.app import warm_up

        app = create_app()
        warm_up(app)
        text = open({str(SEED)!r}, encoding="utf-8").read()
        seen = []
        watching = False

        def hook(event, args):
            if watching and event in ("open", "subprocess.Popen", "os.posix_spawn"):
                seen.append((event, str(args[0])))

        sys.addaudithook(hook)
        with TestClient(base_url="http://127.0.0.1", app=app) as client:
            def compare(i, lang):
                body = {{"scenario": text.replace("hours_per_day: 6", f"hours_per_day: {{1 + i / 10}}"), "lang": lang}}
                r = client.post("/api/compare", json=body)
                assert r.status_code == 200, r.text

            compare(0, "en")  # FastAPI reads the endpoint's source once, for its error context
            watching = True
            for i in range(1, 21):
                compare(i, "zh" if i % 2 else "en")
            watching = False
        print(seen)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"read per request: {out.stdout}"
