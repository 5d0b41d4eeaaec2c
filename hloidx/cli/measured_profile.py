"""``hloidx cost --profile``: which argument is a profile, and reading it (the work is in
``hloidx.profiles`` and ``hloidx.perf.measured_source``; this module only wires it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..perf.measured_source import attach, module_of, profile_device, program_of

__all__ = ["attach", "is_profile_path", "module_of", "profile_device", "program_of", "read"]


def is_profile_path(path: str) -> bool:
    """A profile rather than an HLO module: an nsys-jax folder or zip, SQLite, xplane."""
    p = Path(path)
    if p.is_dir():  # an unpacked nsys-jax archive (else a dump directory: the caller's)
        return any(p.glob("nvtx_gpu_proj_trace")) or any(p.glob("*/nvtx_gpu_proj_trace"))
    if p.name.endswith((".xplane.pb", ".zip", ".sqlite", ".nsys-rep.sqlite")):
        return True
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return head.startswith((b"PK", b"SQLite format 3"))


def read(path: str, warmup: int | None) -> Any:
    from ..profiles import read_profile

    return read_profile(path, warmup)
