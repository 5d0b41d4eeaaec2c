"""The other results as notebook objects: a heatmap (:class:`Picture`, ``hloidx show``), tiles
(:class:`TileView`, ``hloidx tile``), thread maps (:class:`ThreadsView`, ``hloidx threads``),
coalescing (:class:`CoalescingView`, ``hloidx coalescing``) and the cost table
(:class:`CostView`, ``hloidx cost``). ``str()`` is the command's text, ``as_dict()`` its JSON."""

from __future__ import annotations

from typing import Any

from ..errors import HloidxError
from . import html as h
from .display import Display

#: kernels the cost table shows in HTML before it says how many more there are
HTML_ROWS = 40

#: ``hloidx show`` sizes its picture to the console: 80 columns when written to a pipe
WIDTH = 80


class Picture(Display):
    """The heatmap of one operand: each element coloured by how often it is read.
    ``str()`` is ``hloidx show FILE --instruction NAME [--operand K]`` written to a pipe,
    ``as_dict()`` its JSON; in Jupyter the SVG (one ``rect`` per cell with ``data-index`` and
    ``data-count``). ``.svg()`` gives the SVG alone.

    >>> import hloidx
    >>> m = hloidx.parse_hlo('''
    ... HloModule m
    ... ENTRY e {
    ...   p0 = f32[8] parameter(0)
    ...   ROOT s = f32[4] slice(p0), slice={[0:8:2]}
    ... }''')
    >>> pic = hloidx.show(m, "s")
    >>> str(pic).splitlines()[:2]
    ['s operand 0: p0 f32[8]', '  ..  ..  ..  ..  ']
    """

    def __init__(self, ins: Any, operand: int, pic: Any, counts: Any, marked: str) -> None:
        self.record = ins
        self.operand = operand
        self.picture = pic
        self.counts = counts
        self.marked = marked
        op = ins.operands[operand]
        self.title = f"{ins.name} operand {operand}: {op.name} {op.shape}"

    def __repr__(self) -> str:
        return f"<hloidx Picture {self.title}>"

    def text(self) -> str:
        if self.picture is None:
            return f"{self.title}: no picture: {self.counts.note}"
        from ..render.plain import picture_text

        return picture_text(self.title, self.picture, self.marked)

    def as_dict(self) -> dict[str, Any]:
        if self.picture is None:
            return {
                "schema_version": 1,
                "instruction": self.record.name,
                "operand": self.operand,
                "picture": None,
                "reason": self.counts.note,
            }
        from ..render.plain import picture_document

        op = self.record.operands[self.operand]
        return picture_document(self.record.name, self.operand, op, self.picture)

    def svg(self) -> str:
        """The picture as a standalone SVG document (``hloidx show --svg FILE``)."""
        from ..pictures.svg import svg

        if self.picture is None:
            raise HloidxError(f"{self.title}: no picture: {self.counts.note}")
        return svg(self.picture, self.title)

    def html(self) -> str:
        if self.picture is None:
            return h.note(f"{self.title}: no picture: {self.counts.note}")
        return self.svg()


def picture_of(
    ins: Any,
    operand: int = 0,
    *,
    dims: tuple[int, int] | None = None,
    output_element: tuple[int, ...] | None = None,
    tile: tuple[int, ...] | None = None,
    tile_index: tuple[int, ...] | None = None,
    warp: tuple[int, int] | None = None,
    device: str = "rtx-a6000",
    width: int = WIDTH,
) -> Picture:
    """The :class:`Picture` of operand ``operand`` of an analysed instruction (the options of
    ``hloidx show``: ``output_element``, ``tile`` with ``tile_index``, or ``warp`` (block,
    warp) on ``device`` outline what that part of the output reads)."""
    from ..pictures import operand_picture

    if not 0 <= operand < len(ins.operands):
        raise HloidxError(f"{ins.name} has {len(ins.operands)} operand(s); no operand {operand}")
    if sum(x is not None for x in (output_element, tile, warp)) > 1:
        raise HloidxError("give one of output_element, tile and warp")
    region, marked, points = None, "the chosen output element", None
    if tile is not None:
        region, marked = _tile_region(ins.instruction, tuple(tile), tile_index)
    elif tile_index is not None:
        raise HloidxError("tile_index needs tile")
    if warp is not None:
        points, marked = _warp_points(ins.instruction, tuple(warp), device, operand)
    try:
        pic, counts = operand_picture(
            ins,
            operand,
            dims=None if dims is None else (dims[0], dims[1]),
            output_element=None if output_element is None else tuple(output_element),
            output_region=region,
            operand_points=points,
            max_cols=max(8, min(64, (width - 10) // 2)),
        )
    except ValueError as error:
        raise HloidxError(str(error)) from None
    return Picture(ins, operand, pic, counts, marked)


def _tile_region(
    instr: Any, sizes: tuple[int, ...], index: tuple[int, ...] | None
) -> tuple[tuple[tuple[int, int], ...], str]:
    extents = tuple(instr.shape.dims) if instr.shape.is_array else ()
    if len(sizes) != len(extents):
        raise HloidxError(f"tile needs {len(extents)} sizes for output {list(extents)}")
    index = tuple(index) if index is not None else tuple(0 for _ in sizes)
    if len(index) != len(sizes):
        raise HloidxError(f"tile_index needs {len(sizes)} indices")
    box = []
    for k, (s, t, n) in enumerate(zip(sizes, index, extents, strict=True)):
        if s < 1 or not 0 <= t * s < n:
            raise HloidxError(f"tile {list(index)} of sizes {list(sizes)} is outside dim {k}")
        box.append((t * s, min(n, (t + 1) * s) - 1))
    return tuple(box), f"output tile {list(index)} of sizes {list(sizes)}"


def _warp_points(
    instr: Any, warp: tuple[int, ...], device: str, operand: int
) -> tuple[list[tuple[int, ...]], str]:
    from ..gpu.analysis import analyze_fusion
    from ..gpu.devices import device_profile
    from ..gpu.thread_maps import warp_operand_elements

    if len(warp) != 2:
        raise HloidxError("warp is (block, warp), e.g. (0, 1)")
    if instr.opcode != "fusion":
        raise HloidxError("warp needs a fusion (the GPU kernel XLA emits for it)")
    view = analyze_fusion(instr, device_profile(device))
    points = warp_operand_elements(view.threads, warp[0], warp[1], operand)
    return points, f"warp {warp[1]} of block {warp[0]} ({len(points)} elements)"


class _Document(Display):
    """A result that is one JSON document and the command's lines drawn from it."""

    kind = "result"

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def as_dict(self) -> dict[str, Any]:
        return self.doc

    def __repr__(self) -> str:
        name = self.doc.get("name") or self.doc.get("instruction") or self.doc.get("module")
        return f"<hloidx {self.kind} of {name}>"


class TileView(_Document):
    """The tile of every operand that an output tile needs (``hloidx tile FILE --instruction
    NAME --tile SIZES``): ``str()`` its text, ``as_dict()`` its JSON; the attributes of
    ``InstructionTiles`` (``.operands``, ``.sizes``, ...) are the view's too.

    >>> import hloidx
    >>> m = hloidx.parse_hlo('''
    ... HloModule m
    ... ENTRY e {
    ...   p0 = f32[4,6] parameter(0)
    ...   ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
    ... }''')
    >>> t = hloidx.tile(m, "t", (2, 4))
    >>> t.operands[0].rectangle, t.as_dict()["tile"]
    (True, [2, 4])
    """

    kind = "tiles"

    def __init__(self, doc: dict[str, Any], tiles: Any = None) -> None:
        super().__init__(doc)
        self.tiles = tiles

    def __getattr__(self, name: str) -> Any:
        tiles = self.__dict__.get("tiles")
        if tiles is None or name.startswith("_"):
            raise AttributeError(name)
        return getattr(tiles, name)

    def text(self) -> str:
        if self.doc.get("tile") == "auto":
            from ..render.plain import auto_tiles_text

            return auto_tiles_text(self.doc)
        from ..tiling.report import text_lines

        return "\n".join(text_lines(self.doc))

    def html(self) -> str:
        doc = self.doc
        if doc.get("tile") == "auto":
            rows = [
                [
                    h.cell(str(c["tile"]), mono=True),
                    h.cell(c["exact"]),
                    h.cell(c["bytes_per_output_element"]),
                    h.cell(c["bytes_per_tile"]),
                    h.cell(", ".join("?" if b is None else f"{b:,}" for b in c["operand_bytes"])),
                ]
                for c in doc["candidates"]
            ]
            header = ["tile", "exact", "bytes/elem", "bytes/tile", "per operand"]
            return h.heading(f"{doc['instruction']}: tile sizes, best first", 3) + h.table(
                header, rows
            )
        rows = []
        for o in doc["operands"]:
            rows.append(
                [
                    h.cell(f"{o['index']} {o['name']}", mono=True),
                    h.cell(o["shape"], mono=True),
                    h.cell(o["rectangle"]),
                    h.cell(h.pre(o["offset_map"] or "UNDEFINED"), raw=True),
                    h.cell(h.pre(o["size_map"] or ""), raw=True),
                    h.cell(h.pre(o["stride_map"] or ""), raw=True),
                    h.cell(o["constraints"] or "", mono=True),
                    h.cell(o.get("bytes_per_tile")),
                ]
            )
        header = ["operand", "shape", "rectangle", "offsets", "sizes", "strides"]
        header += ["constraints", "bytes/tile"]
        title = f"tiles of {doc['instruction']}: output tile {doc['tile']}"
        notes = "".join(h.note(n) for n in doc.get("notes", []))
        return h.heading(title, 3) + h.table(header, rows) + notes


_LOOP = """HloModule m
f { p = f32[1024] parameter(0)
    ROOT n = f32[1024] negate(p) }
ENTRY e { x = f32[1024] parameter(0)
    ROOT fusion = f32[1024] fusion(x), kind=kLoop, calls=f }"""


class ThreadsView(_Document):
    """Thread-id maps of a fusion (``hloidx threads FILE --instruction NAME``): ``str()`` its
    text, ``as_dict()`` its JSON; in Jupyter the maps per operand.

    >>> import hloidx
    >>> t = hloidx.threads(_LOOP, "fusion", "a100")
    >>> str(t).splitlines()[0]
    'fusion (e): loop emitter on a100'
    """

    kind = "threads"

    def text(self) -> str:
        from ..render.plain import threads_text

        return threads_text(self.doc)

    def html(self) -> str:
        doc = self.doc
        rows = []
        for o in doc["operands"]:
            status = (
                "UNDEFINED" if o["undefined"] else ("exact" if o["exact"] else "over-approximation")
            )
            maps = "\n".join(m["map"] for m in o["maps"]) or "KNOWN EMPTY (never read)"
            rows.append(
                [
                    h.cell(f"{o['index']} {o['name']} {o['shape']}", mono=True),
                    h.cell(h.status(status), raw=True),
                    h.cell(h.pre(maps), raw=True),
                ]
            )
        outputs = "".join(h.pre(f"thread -> output: {o['map']}") for o in doc["outputs"])
        title = f"{doc['name']}: {doc['emitter']} emitter on {doc['device']['name']}"
        return h.heading(title, 3) + outputs + h.table(["operand", "status", "maps"], rows)


class CoalescingView(_Document):
    """Whether each fusion's reads are coalesced (``hloidx coalescing FILE``): ``str()`` its
    table, ``as_dict()`` its JSON.

    >>> import hloidx
    >>> c = hloidx.coalescing(_LOOP)
    >>> [(o["name"], o["coalesced"]) for o in c.as_dict()["fusions"][0]["operands"]]
    [('x', True)]
    """

    kind = "coalescing"

    def text(self) -> str:
        from ..render.plain import coalescing_text

        return coalescing_text(self.doc)

    def html(self) -> str:
        rows = []
        for f in self.doc["fusions"]:
            for k, o in enumerate(f["operands"]):
                figures = o["figures"] or {}
                rows.append(
                    [
                        h.cell(f["name"] if k == 0 else "", mono=True),
                        h.cell(f["emitter"] if k == 0 else ""),
                        h.cell(f"{o['index']} {o['name']} {o['shape']}", mono=True),
                        h.cell(_yes_no(o["coalesced"]), raw=True),
                        h.cell(o["method"]),
                        h.cell(figures.get("transactions")),
                        h.cell(figures.get("bytes_fetched_per_byte_used")),
                    ]
                )
        header = ["fusion", "emitter", "operand", "coalesced", "how", "transactions", "bytes/used"]
        title = f"coalescing of {self.doc['module']} on {self.doc['device']['name']}"
        return h.heading(title, 3) + h.table(header, rows)


def _yes_no(coalesced: bool) -> str:
    return '<span class="exact">yes</span>' if coalesced else '<span class="unknown">NO</span>'


class CostView(Display):
    """What each kernel of a module costs on a GPU (``hloidx cost FILE --device D [--sort S]
    [--limit N]``): ``str()`` its text, ``as_dict()`` its JSON, ``to_pandas()`` one row per
    kernel with every JSON field (nested fields as dotted columns); ``.report`` the
    ``CostReport``. Times are estimates from XLA's GPU cost model, labelled so.

    >>> import hloidx
    >>> c = hloidx.cost(_LOOP, "a100", sort="name")
    >>> len(c.kernels()), c.as_dict()["kernels"][0]["name"]
    (1, 'fusion')
    """

    def __init__(self, report: Any, sort: str = "time", limit: int | None = None) -> None:
        self.report = report
        self.sort = sort
        self.limit = limit

    def __repr__(self) -> str:
        return f"<hloidx cost of {len(self.kernels())} kernels>"

    def kernels(self) -> list[dict[str, Any]]:
        return list(self.as_dict().get("kernels", []))

    def text(self) -> str:
        text = getattr(self.report, "text", None)
        return str(self.report) if text is None else text(self.sort, self.limit)

    def as_dict(self) -> dict[str, Any]:
        return self.report.as_dict(self.sort, self.limit)

    def _columns(self) -> tuple[list[dict[str, Any]], list[str]]:
        flat = [_flatten(k) for k in self.kernels()]
        columns: list[str] = []
        for row in flat:
            columns.extend(c for c in row if c not in columns)
        return flat, columns

    def html(self) -> str:
        """The columns of ``hloidx cost`` (every JSON field is in ``to_pandas()``)."""
        from ..perf.text import human_bytes, human_count, human_time

        doc = self.as_dict()
        rows = []
        for k in doc.get("kernels", [])[:HTML_ROWS]:
            launch = k.get("launch") or {}
            blocks, threads = launch.get("blocks"), launch.get("threads_per_block")
            share = k.get("share")
            flops = human_count(k["flops"]) if k.get("flops") is not None else "-"
            rows.append(
                [
                    h.cell(k.get("name"), mono=True),
                    h.cell(k.get("emitter")),
                    h.cell(f"{blocks}x{threads}" if blocks is not None else "-", num=True),
                    h.cell(flops, num=True),
                    h.cell(human_bytes(k.get("bytes_read") or 0), num=True),
                    h.cell(human_bytes(k.get("bytes_written") or 0), num=True),
                    h.cell(human_time(k.get("read_time_ns")), num=True),
                    h.cell(human_time(k.get("write_time_ns")), num=True),
                    h.cell(human_time(k.get("compute_time_ns")), num=True),
                    h.cell(human_time(k.get("exec_time_ns")), num=True),
                    h.cell(k.get("bound")),
                    h.cell("-" if share is None else f"{share:.1%}", num=True),
                    h.cell(k.get("why") or ""),
                ]
            )
        header = ["kernel", "emitter", "launch", "flops", "read", "written", "read t"]
        header += ["write t", "compute t", "est. time", "bound", "share", "why"]
        title = f"cost of {doc.get('module', '')} on {_device_name(doc)}"
        estimate = doc.get("estimate") or "an estimate, not a measurement"
        total = doc.get("total_time_ns")
        totals = "" if total is None else f"estimated module time: {human_time(total)}; "
        more = ": .to_pandas() has them all"
        return (
            h.heading(title, 3)
            + h.note(f"{totals}{estimate}")
            + h.table(header, rows, total=len(doc.get("kernels", [])), more=more)
        )

    def to_pandas(self) -> Any:
        from .frames import frame

        flat, columns = self._columns()
        return frame(flat, tuple(columns))


def _device_name(doc: dict[str, Any]) -> str:
    device = doc.get("device")
    return str(device.get("name", "")) if isinstance(device, dict) else str(device or "")


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted columns (``time.memory_ns``); lists as their text."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            out.update(_flatten(item, name + "."))
        elif isinstance(item, list | tuple):
            out[name] = ", ".join(str(x) for x in item)
        else:
            out[name] = item
    return out
