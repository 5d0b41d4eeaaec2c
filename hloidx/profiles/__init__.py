"""Measured profiles: nsys-jax archives, Nsight Systems SQLite exports, JAX profiler files
(``*.xplane.pb``) and their trace JSON, read into the steady time of every instruction of
every program they ran, joined on (module, program id, instruction). Knows nothing of
estimates (``hloidx.perf.measured`` puts the two side by side).

pyarrow and protobuf come with the optional extra ``hloidx[profile]``."""

from __future__ import annotations

from pathlib import Path

from .records import (
    Execution,
    Launch,
    OpTiming,
    Profile,
    ProfileError,
    ProgramProfile,
    program_for,
    summarize,
    warmup_count,
)

__all__ = [
    "Execution",
    "Launch",
    "OpTiming",
    "Profile",
    "ProfileError",
    "ProgramProfile",
    "program_for",
    "read_profile",
    "summarize",
    "warmup_count",
]

INSTALL = "reading profiles needs the optional extra: pip install -e '.[profile]'"


def _kind(path: str) -> str:
    p = Path(path)
    if p.is_dir():
        return "nsys-jax"
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError as e:
        raise ProfileError(f"{path}: cannot read ({e.strerror or e})") from None
    if not head:
        raise ProfileError(f"{path}: the file is empty")
    if head.startswith(b"PK"):
        return "nsys-jax"
    if head.startswith(b"SQLite format 3"):
        return "sqlite"
    if head.startswith(b"\x1f\x8b") or p.name.endswith((".json", ".json.gz")):
        return "trace-json"
    if p.name.endswith((".pb", ".xplane.pb")):
        return "xplane"
    raise ProfileError(
        f"{path}: not a profile hloidx reads (an nsys-jax archive or folder, an Nsight "
        "Systems SQLite export, a *.xplane.pb or a trace.json.gz)"
    )


def read_profile(path: str, warmup: int | None = None) -> Profile:
    """The profile at ``path`` (its format found from its content). ``warmup``: drop this
    many first executions per device instead of the warm-up rule
    (:func:`~hloidx.profiles.records.warmup_count`)."""
    kind = _kind(path)
    try:
        if kind == "nsys-jax":
            from .nsys_jax import read_nsys_jax

            return read_nsys_jax(path, warmup)
        if kind == "sqlite":
            from .nsys_sqlite import read_nsys_sqlite

            return read_nsys_sqlite(path, warmup)
        if kind == "trace-json":
            from .trace_json import read_trace_json

            return read_trace_json(path, warmup)
        from .xplane import read_xplane

        return read_xplane(path, warmup)
    except ImportError as e:
        if (e.name or "").split(".")[0] in ("pyarrow", "google") or "_pb2" in str(e.name):
            raise ProfileError(f"{path}: {INSTALL} (missing {e.name})") from None
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        # a file of the right format with content no profiler writes (a wrong column type,
        # a missing field): the file is what is wrong
        raise ProfileError(
            f"{path}: unexpected content for a {kind} profile ({type(e).__name__}: {e})"
        ) from None
