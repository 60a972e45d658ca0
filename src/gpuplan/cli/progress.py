"""Progress on stderr for long commands (rich, imported only when a bar is shown). No typer here:
the lean `simulate` path (`cli.fast`) uses it too."""

from __future__ import annotations

from collections.abc import Callable, Sequence

ProgressCb = Callable[[int, int], None]


def simulate_progress(lang: str) -> Callable[[Sequence[int], int], tuple[ProgressCb | None, Callable[[], None]]]:
    """A rich progress bar on stderr for long runs; nothing when stderr is not a terminal."""

    def start(levels: Sequence[int], jobs: int) -> tuple[ProgressCb | None, Callable[[], None]]:
        import sys

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
