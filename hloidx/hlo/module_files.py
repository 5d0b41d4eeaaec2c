"""Which files hold modules: ``*.hlo`` and ``*.mlir`` (StableHLO) files, XLA's binary HLO
(``*.hlo.pb``, ``*.hlo.pb.xz``), and the modules of an XLA dump directory (``--xla_dump_to``),
which sit among buffer assignments, LLVM IR, object files and other protos: their texts, and
their binary HLO where no text of the same module is beside it (``--xla_dump_hlo_as_proto``,
nsys-jax's ``dump/``)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# module_0008.jit_f.before_optimizations.txt, module_0008.jit_f.cpu_after_optimizations.txt,
# module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt; not the `-buffer-assignment.txt`,
# `-memory-usage-report.txt` and `-live-range.txt` files written beside them.
_DUMP_MODULE = re.compile(r"(?:^|[._])(before|after)_optimizations\.txt$")
# module_0040.pjit_f.sm_8.0_gpu_after_optimizations.hlo.pb(.xz): the same modules as binary HLO
_DUMP_PROTO = re.compile(r"(?:^|[._])(before|after)_optimizations\.hlo\.pb(?:\.xz)?$")
_BINARY = re.compile(r"\.hlo\.pb(?:\.xz)?$")

STAGES = ("before", "after", "all")


def dump_stage(name: str) -> str | None:
    """``before`` or ``after`` for an XLA dump's module text, None for any other file.

    XLA's texts and protos say their stage in their name; StableHLO (``*.mlir``, such as the
    ``module_NNNN.<name>/module.mlir`` jax 0.12 dumps beside them) is what JAX hands XLA,
    so it is before optimization. A ``*.hlo`` file's name does not say: None."""
    match = _DUMP_MODULE.search(name) or _DUMP_PROTO.search(name)
    if match:
        return match.group(1)
    return "before" if name.endswith(".mlir") else None


def is_module_file(name: str, stage: str = "all") -> bool:
    """A module file of ``stage``: ``*.hlo`` at every stage, the others by ``dump_stage``."""
    if name.endswith(".hlo"):  # HLO text whose stage its name does not say
        return True
    if _BINARY.search(name) and dump_stage(name) is None:  # binary HLO outside a dump
        return True
    found = dump_stage(name)
    return found is not None and stage in ("all", found)


def _has_text_twin(path: Path) -> bool:
    """A binary HLO file whose module's text is beside it (XLA dumps both with
    ``--xla_dump_hlo_as_text --xla_dump_hlo_as_proto``): the text is read, not both."""
    if not _BINARY.search(path.name):
        return False
    stem = _BINARY.sub("", path.name)
    return any((path.parent / (stem + suffix)).is_file() for suffix in (".txt", ".hlo"))


def find_module_files(
    paths: Sequence[str], stage: str = "all"
) -> tuple[list[tuple[str, bool]], list[str]]:
    """``(file, named explicitly)`` for every argument, directories searched recursively for
    module files (sorted), and the arguments that do not exist. A file named explicitly is
    taken whatever its name."""
    files: list[tuple[str, bool]] = []
    missing: list[str] = []
    seen: set[str] = set()
    for arg in paths:
        if arg != "-" and os.path.isfile(arg):
            # a file named on the command line, the common case, without pathlib (and the
            # urllib.parse and ipaddress it imports): start-up counts
            if arg not in seen:
                seen.add(arg)
                files.append((arg, True))
            continue
        from pathlib import Path

        path = Path(arg)
        if path.is_dir():
            found = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file() and is_module_file(p.name, stage) and not _has_text_twin(p)
            )
            for name in found:
                if name not in seen:
                    seen.add(name)
                    files.append((name, False))
        elif path.is_file() or arg == "-":
            if arg not in seen:
                seen.add(arg)
                files.append((arg, True))
        else:
            missing.append(arg)
    return files, missing
