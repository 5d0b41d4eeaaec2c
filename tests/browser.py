"""Debian's chromium driven by Playwright, for the tests that open our HTML in a real browser.

No browser is downloaded: Playwright starts the system's ``chromium`` (``apt-get install
chromium``; ``.ci/run`` installs it). Where Playwright or chromium is missing the test is
skipped, unless ``HLOIDX_BROWSER_TESTS=required`` (set by ``.ci/run``): then it fails.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

#: chromium as a quiet, headless, offline test browser (root in a container needs no sandbox)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing(why: str) -> None:
    if os.environ.get("HLOIDX_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required here, but {why}")
    pytest.skip(why)


def sync_api() -> Any:
    """Playwright's sync API (skips, or fails where required, without it)."""
    try:
        from playwright import sync_api as api
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[browser]')")
    return api


#: WebGL in software (Model Explorer draws its graph with WebGL): chromium's SwiftShader
WEBGL_FLAGS = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def launch(playwright: Any, *, webgl: bool = False) -> Any:
    """The system's chromium, started by ``playwright`` (skips, or fails where required,
    without it); ``webgl``: with WebGL drawn in software instead of no GPU at all."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        _missing("no chromium browser found (apt-get install chromium)")
    args = [f for f in FLAGS if f != "--disable-gpu"] + WEBGL_FLAGS if webgl else FLAGS
    return playwright.chromium.launch(executable_path=path, headless=True, args=args)


def png_colours(data: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of a PNG screenshot (8-bit RGB or RGBA, not interlaced, as
    chromium writes them): enough to ask whether a colour was drawn, without an image library."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8, header
    assert colour_type in (2, 6), header
    assert interlace == 0, header
    step = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * step
    previous = bytearray(stride)
    colours: set[tuple[int, int, int]] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            up_left = previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                guess = left + up - up_left
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - up_left)
                near = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + near) & 0xFF
        colours.update((line[i], line[i + 1], line[i + 2]) for i in range(0, stride, step))
        previous = line
    return colours
