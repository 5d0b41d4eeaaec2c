"""Starting Model Explorer with hloidx's extension from Python (the tests and
``python -m hloidx.model_explorer`` use it)."""

from __future__ import annotations

import os
from collections.abc import Sequence

#: the extension module Model Explorer imports (``<name>.main``)
EXTENSION = "hloidx.model_explorer"


def _offline_version_check(print_msg: bool = True) -> dict[str, str]:
    # Model Explorer asks the package index and GitHub for a newer release at start and from
    # its page; its page needs the answer's fields, so they are given, empty.
    return {"version": "", "runningVersion": "", "releaseUrl": "", "desktopAppUrl": ""}


def serve(
    models: Sequence[str],
    node_data: Sequence[str] = (),
    *,
    host: str = "localhost",
    port: int = 8080,
    open_browser: bool = False,
) -> None:
    """Serve ``models`` (with ``node_data`` files) until interrupted."""
    import model_explorer  # type: ignore[import-not-found]
    from model_explorer import server  # type: ignore[import-not-found]

    server._check_new_version = _offline_version_check
    config = model_explorer.config()
    for path in models:
        config.add_model_from_path(os.path.abspath(path))
    for path in node_data:
        config.add_node_data_from_path(os.path.abspath(path))
    model_explorer.visualize_from_config(
        config, host=host, port=port, extensions=[EXTENSION], no_open_in_browser=not open_browser
    )
