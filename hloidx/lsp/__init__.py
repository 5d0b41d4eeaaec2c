"""``hloidx lsp``: a language server for HLO text (``.hlo``, XLA's ``*.txt`` dumps) and
StableHLO ``.mlir`` over stdio — diagnostics as you type, maps and costs on hover, definitions,
references, outline, inlay hints and code lenses. Needs ``pip install -e '.[lsp]'``
(pygls 2, lsprotocol); :mod:`.index` and :mod:`.document` need neither.
"""

from __future__ import annotations

__all__ = ["serve"]


def serve() -> None:
    """Speak LSP on stdin/stdout until the client says exit."""
    from .server import build_server

    build_server().start_io()
