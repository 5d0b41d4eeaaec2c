"""The module's debug tables (``FileNames``, ``FunctionNames``, ``FileLocations``,
``StackFrames``): their rows read line by line, and a frame's stack from them."""

from __future__ import annotations

import re

__all__ = ["frame_stack", "table_line"]

_TABLE_HEADER = re.compile(r"[ \t]*(FileNames|FunctionNames|FileLocations|StackFrames)[ \t\r]*$")
_TABLE_STRING = re.compile(r'[ \t]*(\d+)[ \t]+"((?:[^"\\]|\\.)*)"')
_TABLE_FIELDS = re.compile(r"[ \t]*(\d+)[ \t]+\{([^}]*)\}")
_FIELD = re.compile(r"(\w+)=(-?\d+)")


def table_line(
    text: str,
    begin: int,
    stop: int,
    tables: dict[str, dict[int, object]],
    table_holder: list[str | None],
) -> None:
    """One line outside the computations: a table's header or one of its rows (into
    ``tables``); ``table_holder[0]`` is the table being read (None: none)."""
    header = _TABLE_HEADER.match(text, begin, stop)
    if header is not None:
        table_holder[0] = header.group(1)
        tables.setdefault(header.group(1), {})
        return
    table = table_holder[0]
    if table is None:
        return
    if table in ("FileNames", "FunctionNames"):
        entry = _TABLE_STRING.match(text, begin, stop)
        if entry is not None:
            tables[table][int(entry.group(1))] = entry.group(2)
            return
    else:
        entry = _TABLE_FIELDS.match(text, begin, stop)
        if entry is not None:
            fields = {k: int(v) for k, v in _FIELD.findall(entry.group(2))}
            tables[table][int(entry.group(1))] = fields
            return
    if text[begin:stop].strip():
        table_holder[0] = None


def frame_stack(
    tables: dict[str, dict[int, object]], frame_id: int
) -> list[tuple[str, int | None, str]]:
    """The stack of frame ``frame_id``, innermost first: (file, line, function) each;
    unknown parts are ``"?"`` / None."""
    frames = tables.get("StackFrames", {})
    locations = tables.get("FileLocations", {})
    files = tables.get("FileNames", {})
    functions = tables.get("FunctionNames", {})
    out: list[tuple[str, int | None, str]] = []
    seen: set[int] = set()
    current: int | None = frame_id
    while current and current not in seen and current in frames:
        seen.add(current)
        entry = frames[current]
        assert isinstance(entry, dict)
        location = locations.get(entry.get("file_location_id", -1), {})
        assert isinstance(location, dict)
        file = files.get(location.get("file_name_id", -1), "?")
        function = functions.get(location.get("function_name_id", -1), "?")
        out.append((str(file), location.get("line"), str(function)))
        parent = entry.get("parent_frame_id")
        current = parent if parent != current else None
    return out
