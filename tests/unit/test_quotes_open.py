"""Opening the quote store from several threads at once (the web server's case) migrates it once."""

from __future__ import annotations

import threading
from pathlib import Path

from gpuplan.quotes.store import open_store


def test_concurrent_first_opens_share_one_engine(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.sqlite'}"
    engines: list[object] = []
    errors: list[BaseException] = []

    def go() -> None:
        try:
            engines.append(open_store(url))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(engines) == 8 and all(e is engines[0] for e in engines)
