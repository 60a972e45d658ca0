"""The terminal: stdout's console and a progress bar on stderr for long commands. rich is imported
only when used."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPED_WIDTH = 100
"""Columns when stdout is not a terminal and COLUMNS is not set (a file or a pipe has no width)."""


def console() -> Console:
    """stdout's console: the terminal's width, else COLUMNS, else 100 columns when piped."""
    import os

    from rich.console import Console

    width = None
    if not os.environ.get("COLUMNS", "").strip().isdigit() and not sys.stdout.isatty():
        width = PIPED_WIDTH
    return Console(highlight=False, soft_wrap=False, width=width)

ProgressCb = Callable[[int, int], None]


def simulate_progress(lang: str) -> Callable[[Sequence[int], int], tuple[ProgressCb | None, Callable[[], None]]]:
    """A rich progress bar on stderr for long runs; nothing when stderr is not a terminal."""

    def start(levels: Sequence[int], jobs: int) -> tuple[ProgressCb | None, Callable[[], None]]:
        steps = len(levels)
        if not sys.stderr.isatty() or steps * jobs < 200_000:
            return None, lambda: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from gpuplan.i18n import t

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        task = bar.add_task(t("simulate.progress", lang, reserved=levels[0]), total=steps)
        bar.start()

        def update(done: int, total: int) -> None:
            label = levels[min(done, total - 1)]
            bar.update(task, completed=done, description=t("simulate.progress", lang, reserved=label))

        return update, bar.stop

    return start
