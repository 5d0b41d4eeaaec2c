"""``hloidx maps`` over many module files (a directory, an XLA dump): each file analysed on its
own (``--jobs N`` processes), a progress bar per file, a report per file and a table of all."""

from __future__ import annotations

import json
import queue
import sys
import time
from typing import Any

import click

from ..errors import HloidxError
from .options import EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEMS, State, console, file_text


def _analyse_file(job: tuple[int, str, Any, Any]) -> Any:
    """One file, in this process or a worker; progress goes to ``updates`` when given."""
    from .module_outcome import Outcome, analyse_text

    index, path, options, updates = job
    last = [0.0]

    def on_progress(done: int, total: int) -> None:
        now = time.monotonic()
        if updates is not None and (done == total or now - last[0] > 0.1):
            last[0] = now
            updates.put((index, done, total))

    try:
        with open(path, "rb") as handle:
            text = file_text(handle.read(), path)
    except (click.UsageError, HloidxError) as error:  # HloidxError: damaged binary HLO
        outcome = Outcome(path)
        outcome.error_lines = [f"{path}: error: {error.message}"]
        outcome.exit_code = EXIT_BAD_INPUT
        return outcome
    except OSError as error:
        outcome = Outcome(path)
        outcome.error_lines = [f"{path}: error: cannot read: {error.strerror}"]
        outcome.exit_code = EXIT_BAD_INPUT
        return outcome
    try:
        return analyse_text(text, path, options, on_progress=on_progress)
    except RecursionError:
        outcome = Outcome(path)
        outcome.error_lines = [f"{path}: error: input nested too deeply to process"]
        outcome.exit_code = EXIT_BAD_INPUT
        return outcome


def run_many(paths: list[str], options: Any, jobs: int) -> int:
    show = not State.quiet and sys.stderr.isatty()
    bars = _Bars(paths) if show else None
    try:
        outcomes = _run(paths, options, jobs, bars)
    finally:
        if bars is not None:
            bars.stop()
    if options.fmt == "json":
        from ..render.many_files import many_files_document

        click.echo(json.dumps(many_files_document(outcomes)))
    else:
        from ..render.many_files import many_files_lines

        many_files_lines(outcomes).write_to(console())
    for outcome in outcomes:
        for line in outcome.error_lines:
            click.echo(line, err=True)
    if all(o.usage_error for o in outcomes):
        # the filters match nothing in any file: a usage error, as for one file
        raise click.UsageError(
            "the filters match nothing in any of the files; first: " + outcomes[0].usage_error
        )
    # a file where the filters match nothing (a module before fusion has no fusions) is fine
    codes = {o.exit_code for o in outcomes if not o.usage_error}
    if EXIT_BAD_INPUT in codes:
        return EXIT_BAD_INPUT
    return EXIT_PROBLEMS if EXIT_PROBLEMS in codes else EXIT_OK


def _run(paths: list[str], options: Any, jobs: int, bars: _Bars | None) -> list[Any]:
    if jobs <= 1 or len(paths) <= 1:
        outcomes = []
        for index, path in enumerate(paths):
            if bars:
                bars.start(index)
            outcomes.append(_analyse_file((index, path, options, bars)))
            if bars:
                bars.finish(index)
        return outcomes
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    manager = multiprocessing.Manager() if bars else None
    updates = manager.Queue() if manager else None
    results: list[Any] = [None] * len(paths)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(paths)))
    try:
        futures = {
            pool.submit(_analyse_file, (index, path, options, updates)): index
            for index, path in enumerate(paths)
        }
        pending = set(futures)
        while pending:
            done = {f for f in pending if f.done()}
            for future in done:
                results[futures[future]] = future.result()
                if bars:
                    bars.finish(futures[future])
            pending -= done
            if bars and updates is not None:
                bars.drain(updates)
            if pending:
                time.sleep(0.05)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        if manager is not None:
            manager.shutdown()
    return results


class _Bars:
    """A transient bar per file on stderr: started, then instruction by instruction."""

    def __init__(self, paths: list[str]) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console(stderr=True),
            transient=True,
        )
        self.progress.start()
        self.tasks = [
            self.progress.add_task(_short(p), total=None, start=False, visible=True) for p in paths
        ]

    def start(self, index: int) -> None:
        self.progress.start_task(self.tasks[index])

    def put(self, update: tuple[int, int, int]) -> None:
        """An update from this process (the queue's ``put``, so both paths look alike)."""
        index, done, total = update
        self.progress.start_task(self.tasks[index])
        self.progress.update(self.tasks[index], completed=done, total=total)

    def drain(self, updates: Any) -> None:
        while True:
            try:
                update = updates.get_nowait()
            except queue.Empty:
                return
            self.put(update)

    def finish(self, index: int) -> None:
        task = self.tasks[index]
        total = self.progress.tasks[index].total or 1
        self.progress.update(task, completed=total, total=total, visible=False)

    def stop(self) -> None:
        self.progress.stop()


def _short(path: str, width: int = 48) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]
