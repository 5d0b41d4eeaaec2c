"""What every command shares: exit codes, the options accepted before or after the command
name (``--color``, ``--debug``, ``-q``, ``-o``), consoles, progress bars, reading inputs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from ..render.words import plural  # noqa: F401  (the commands' import of it)

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


class _Defaults:
    debug = False
    color = "auto"
    quiet = False


class _StateView:
    """Options of the running command, kept in the root click context (so that one in-process
    invocation, as in tests, never leaks into the next); defaults outside any command."""

    def _meta(self) -> dict[str, Any] | None:
        ctx = click.get_current_context(silent=True)
        return None if ctx is None else ctx.find_root().meta.setdefault("hloidx.options", {})

    def __getattr__(self, name: str) -> Any:
        meta = self._meta()
        if meta is not None and name in meta:
            return meta[name]
        return getattr(_Defaults, name)

    def __setattr__(self, name: str, value: Any) -> None:
        meta = self._meta()
        if meta is None:
            setattr(_Defaults, name, value)
        else:
            meta[name] = value


State = _StateView()


def reset_state() -> None:
    _Defaults.debug, _Defaults.color, _Defaults.quiet = False, "auto", False


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    force = {"always": True, "never": False}.get(State.color)
    no_color = State.color == "never" or ("NO_COLOR" in os.environ and State.color != "always")
    width = None
    if "HLOIDX_WIDTH" in os.environ:
        width = int(os.environ["HLOIDX_WIDTH"])
    return Console(
        stderr=stderr,
        # the stream of this moment: `--output` swaps sys.stdout after import time
        file=sys.stderr if stderr else sys.stdout,
        force_terminal=force,
        no_color=no_color,
        width=width,
        highlight=False,
        soft_wrap=True,
    )


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal, as Rich's console decides it (``--color``, then
    ``TTY_COMPATIBLE``, ``FORCE_COLOR``, ``isatty``), asking Rich only where its answer could
    differ from ``isatty`` (those variables set, IDLE, Jupyter)."""
    force = {"always": True, "never": False}.get(State.color)
    if force is not None:
        return force
    if (
        "IPython" in sys.modules
        or "TTY_COMPATIBLE" in os.environ
        or "FORCE_COLOR" in os.environ
        or getattr(sys.stdin, "__module__", "").startswith("idlelib")
    ):
        return bool(console().is_terminal)
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        return False if isatty is None else bool(isatty())
    except ValueError:
        return False


def report_error(error: Exception) -> None:
    from ..errors import HloidxError

    if isinstance(error, HloidxError):
        click.echo(error.render(), err=True)
    else:
        click.echo(f"error: {error}", err=True)


def file_text(data: bytes, path: str, hlo: bool = True) -> str:
    """A file's text: gzip-compressed files (``module.hlo.gz``, as XLA's benchmark steps ship)
    are read through; undecodable bytes become U+FFFD. An HLO file (``hlo``) may also be
    xz-compressed, or XLA's binary HLO (``*.hlo.pb``, ``*.hlo.pb.xz``): read as its text."""
    if hlo:  # a damaged one raises BinaryHloError: one line naming the file, exit 2
        from ..hlo.binary_hlo import decompressed, hlo_text_from_bytes

        data = decompressed(data, path)
        text = hlo_text_from_bytes(data, path)
        if text is not None:
            return text
    if data[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise click.UsageError(f"cannot read {path}: a damaged gzip file ({error})") from None
    return data.decode("utf-8", errors="replace")


def read_text(path: str, what: str) -> tuple[str, str]:
    """Text of a file argument or ``-`` (stdin); undecodable bytes become U+FFFD. An HLO
    file may be XLA's binary HLO (:func:`file_text`)."""
    hlo = what == "HLO file"
    if path == "-":
        data = (
            sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        )
        if hlo:
            return file_text(data, "<stdin>"), "<stdin>"
        return data.decode("utf-8", errors="replace"), "<stdin>"
    try:
        with open(path, "rb") as handle:
            return file_text(handle.read(), path, hlo), path
    except IsADirectoryError:
        raise click.UsageError(f"{path} is a directory; name the module files in it") from None
    except OSError as error:
        raise click.UsageError(f"cannot read {what} {path}: {error.strerror}") from None


def load_module(path: str, language: str) -> tuple[Any, str, list[Any]]:
    """The module of a file argument, its display name, and the located errors it had (each
    already reported); exits with 2 when nothing usable could be read."""
    from ..stablehlo import parse_module_lenient

    text, where = read_text(path, "HLO file")
    module, errors = parse_module_lenient(text, where, language)
    for error in errors:
        report_error(error)
    if module is None:
        sys.exit(EXIT_BAD_INPUT)
    return module, where, errors


def progress(
    enabled: bool, total_hint: str
) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A transient progress bar on stderr (a terminal only; never with ``-q``)."""
    if not enabled or State.quiet:
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn(total_hint),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )
    bar.start()
    task = bar.add_task(total_hint, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return update, bar.stop


def language_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--language auto|hlo|stablehlo`` (the value reaches the command as ``language``)."""
    return click.option(
        "--language",
        type=click.Choice(["auto", "hlo", "stablehlo"]),
        default="auto",
        show_default=True,
        help="The input's language: HLO text, or StableHLO (MLIR, what `jax.jit(f).lower(x)"
        ".as_text()` prints); auto detects it.",
    )(command)


def names_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--names roles|plain`` (the value reaches the command as ``names``)."""
    return click.option(
        "--names",
        type=click.Choice(["plain", "roles"]),
        default="plain",
        show_default=True,
        help="Variable names in maps: plain d0/s0/rt0 as XLA prints them, or roles (b, m, n, "
        "k, ...: what each variable indexes, from the op's semantics).",
    )(command)


def jobs_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-j/--jobs N``: ``what`` in N processes."""
    return click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help=f"{what} in N processes.",
    )


# ---------------------------------------------------------------------------
# Options accepted before and after the command name
# ---------------------------------------------------------------------------


def _set_color(ctx: click.Context, _: Any, value: str | None) -> None:
    if value is not None:
        State.color = value


def _set_debug(ctx: click.Context, _: Any, value: bool) -> None:
    if value:
        # read by `main` after the command's context is gone; `main` resets it per run
        _Defaults.debug = True


def _set_quiet(ctx: click.Context, _: Any, value: bool) -> None:
    if value:
        State.quiet = True


def _set_output(ctx: click.Context, _: Any, value: str | None) -> None:
    if value is None or value == "-":
        return
    try:
        handle = open(value, "w", encoding="utf-8")  # noqa: SIM115 - closed with the context
    except OSError as error:
        raise click.BadParameter(f"cannot write {value}: {error.strerror}") from None
    previous = sys.stdout
    sys.stdout = handle

    def restore() -> None:
        sys.stdout = previous
        handle.close()

    ctx.call_on_close(restore)


def global_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--color``, ``--debug``, ``-q`` and ``-o``, on the group and on every command, so that
    ``hloidx maps f.hlo --color never`` works as well as ``hloidx --color never maps f.hlo``."""
    decorators = [
        click.option(
            "--color",
            type=click.Choice(["auto", "always", "never"]),
            default=None,
            expose_value=False,
            is_eager=True,
            callback=_set_color,
            help="Colour in text output: auto (a terminal, unless NO_COLOR is set), always, never.",
        ),
        click.option(
            "--debug",
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_set_debug,
            help="Show Python tracebacks for internal errors.",
        ),
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_set_quiet,
            help="No progress bars and no notes on stderr; errors are still shown.",
        ),
        click.option(
            "-o",
            "--output",
            metavar="FILE",
            default=None,
            expose_value=False,
            callback=_set_output,
            help="Write the output to FILE instead of standard output (no colour).",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command
