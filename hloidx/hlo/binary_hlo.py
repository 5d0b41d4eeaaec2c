"""XLA's binary HLO read as HLO text: ``HloProto`` or ``HloModuleProto`` bytes, as
``--xla_dump_hlo_as_proto`` writes them (``*.hlo.pb``), as nsys-jax keeps them
(``*.hlo.pb.xz``) and as profiles embed them, turned into the text XLA prints for the same
proto (:mod:`hloidx.hlo.proto_text`), which the text parser then reads: one IR, and the same
results as from the text.

Files are recognised by their content (the xz magic, bytes that are no text, a successful
decode into a module) as well as by their name. Decoding needs the ``protobuf`` package (the
``profile`` extra); without it a binary input is a one-line error saying so."""

from __future__ import annotations

import struct
from typing import Any

from ..errors import HloidxError

__all__ = [
    "BinaryHloError",
    "decode_module_proto",
    "decompressed",
    "hlo_text_from_bytes",
    "is_binary_hlo_name",
    "module_from_bytes",
    "module_proto_text_of",
]

XZ_MAGIC = b"\xfd7zXZ\x00"
GZIP_MAGIC = b"\x1f\x8b"
#: names that say "binary HLO" whatever the bytes look like
_BINARY_SUFFIXES = (".pb", ".pb.xz", ".pb.gz", ".hlopb", ".proto")
#: what HLO or StableHLO text may start with (after blank space)
_TEXT_STARTS = (b"HloModule", b"module", b"//", b"/*", b"#", b"ENTRY", b"%", b"func", b"{")
INSTALL_HINT = "pip install -e '.[profile]'"


class BinaryHloError(HloidxError):
    """A binary HLO input that cannot be read: damaged, truncated, not a module, or the
    ``protobuf`` package missing."""


def is_binary_hlo_name(name: str) -> bool:
    """``module.hlo.pb``, ``module_0040.x.after_optimizations.hlo.pb.xz``, ``m.pb``."""
    return name.lower().endswith(_BINARY_SUFFIXES)


def _decompress_xz(data: bytes, path: str) -> bytes:
    import lzma  # only for an xz file: start-up counts

    try:
        return lzma.decompress(data)
    except (lzma.LZMAError, EOFError) as error:
        raise BinaryHloError(
            f"cannot read {path}: a damaged or truncated xz file ({error})"
        ) from None


def _looks_binary(data: bytes) -> bool:
    """Bytes that are no HLO text: a protobuf message starts with a field tag (a module's
    name, field 1, is ``0x0a``) and holds bytes that are not UTF-8 text."""
    head = data[:4096]
    stripped = head.lstrip(b" \t\r\n")
    if stripped.startswith(_TEXT_STARTS):
        return False
    # a message's tags and lengths are control bytes, over a tenth of a real module's first
    # bytes; text with a stray NUL or a broken character has one or two (the text reader
    # locates those)
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    if control < max(4, len(head) // 100):
        return False
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start < len(head) - 4  # not a character cut at the end of the sample
    return False


def _protos(path: str) -> Any:
    try:
        from ..protos import hlo_pb2
    except ImportError:
        message = f"cannot read {path}: XLA's binary HLO needs the protobuf package: {INSTALL_HINT}"
        raise BinaryHloError(message) from None
    except Exception as error:  # protobuf's VersionError: a runtime older than the modules
        message = f"cannot read {path}: the protobuf package is unusable ({error}): {INSTALL_HINT}"
        raise BinaryHloError(message) from None
    return hlo_pb2


def _plausible(module: Any) -> bool:
    """A decoded message that is a module: computations of named instructions with opcodes."""
    if not module.computations:
        return False
    for computation in module.computations:
        if not computation.name:
            return False
        for ins in computation.instructions[:4]:
            if not ins.name or not ins.opcode:
                return False
    return True


def decode_module_proto(data: bytes, path: str = "<bytes>") -> Any | None:
    """The ``HloModuleProto`` message of ``HloProto`` or ``HloModuleProto`` bytes; None when
    the bytes decode as neither; :class:`BinaryHloError` without the protobuf package."""
    hlo_pb2 = _protos(path)
    from google.protobuf.message import DecodeError

    for kind in (hlo_pb2.HloProto, hlo_pb2.HloModuleProto):
        try:
            message = kind.FromString(data)
        except (DecodeError, ValueError, RuntimeError):
            continue
        module = message.hlo_module if kind is hlo_pb2.HloProto else message
        if _plausible(module):
            return module
    return None


def module_proto_text_of(module: Any, path: str = "<bytes>") -> str:
    """The HLO text of a decoded ``HloModuleProto``; a module whose ids or values do not hold
    together (a damaged file that still decodes) is a :class:`BinaryHloError`."""
    from .proto_text import module_proto_text

    try:
        return module_proto_text(module)
    except KeyError as error:
        raise BinaryHloError(
            f"cannot read {path}: a damaged binary HLO (id {error} is used but never defined)"
        ) from None
    except (ValueError, IndexError, TypeError, struct.error) as error:
        raise BinaryHloError(f"cannot read {path}: a damaged binary HLO ({error})") from None


def decompressed(data: bytes, path: str) -> bytes:
    """The bytes of an xz- or gzip-compressed file (by their magic), others as they are."""
    if data.startswith(XZ_MAGIC):
        return _decompress_xz(data, path)
    if data.startswith(GZIP_MAGIC):
        import gzip
        import zlib

        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise BinaryHloError(f"cannot read {path}: a damaged gzip file ({error})") from None
    return data


def hlo_text_from_bytes(data: bytes, path: str) -> str | None:
    """HLO text for the bytes of a binary HLO file (xz- or gzip-compressed or not); None when
    they are not binary HLO (HLO or StableHLO text, compressed or not, is the caller's).

    A file named as binary HLO (``*.pb``, ``*.pb.xz``) that does not decode is a
    :class:`BinaryHloError` naming the file; so is any binary input without the protobuf
    package."""
    named = is_binary_hlo_name(path)
    data = decompressed(data, path)
    # both messages start with field 1 (HloProto.hlo_module, HloModuleProto.name): tag 0x0a
    if not named and not (data[:1] == b"\x0a" and _looks_binary(data)):
        return None
    if not data:
        raise BinaryHloError(f"cannot read {path}: the file is empty")
    module = decode_module_proto(data, path)
    if module is None:
        raise BinaryHloError(
            f"cannot read {path}: not XLA's binary HLO (no HloProto or HloModuleProto decodes "
            "from it; damaged or truncated?)"
        )
    return module_proto_text_of(module, path)


def module_from_bytes(data: bytes, name: str = "<binary HLO>") -> Any:
    """The parsed :class:`~hloidx.hlo.ir.HloModule` of binary HLO bytes (an ``HloProto``, as
    profiles embed them, or an ``HloModuleProto``; compressed or not), for callers that hold
    the bytes rather than a file: errors name ``name``."""
    from .syntax import parse_hlo

    text = hlo_text_from_bytes(data, name if is_binary_hlo_name(name) else name + ".pb")
    if text is None:  # pragma: no cover - a name ending in .pb always decodes or raises
        raise BinaryHloError(f"cannot read {name}: not XLA's binary HLO")
    return parse_hlo(text, name)
