"""The protocol side of ``hloidx lsp`` (pygls 2): requests in, :mod:`.document` answers out.

Every parse and analysis runs on one worker thread (:class:`Worker`), never on the message
loop: requests wait for the analysis of the text they are about, and a request for a file
already analysed answers from the analysis kept for its content (a hash of the text). After
the diagnostics are published, the worker analyses every instruction and estimates every
kernel in the background, a slice at a time, so that hovers and hints answer from the cache;
a request always goes before the background work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .document import DEFAULT_DEVICE, FileAnalysis, content_hash

__all__ = ["HloLanguageServer", "build_server"]

logger = logging.getLogger(__name__)

#: The most diagnostics published for one file (a binary file can have an error per line).
MAX_DIAGNOSTICS = 1000
#: Seconds of quiet after a change before the text is analysed again.
DEBOUNCE = 0.3
#: Analyses kept for texts no longer open or changed since (by content hash).
KEPT = 8

# request > first analysis > background work
_REQUEST, _ANALYSIS, _BACKGROUND = 0, 1, 2


class Worker:
    """One thread running submitted functions, the most urgent first."""

    def __init__(self) -> None:
        self._queue: queue.PriorityQueue[Any] = queue.PriorityQueue()
        self._order = itertools.count()
        self._thread = threading.Thread(target=self._run, name="hloidx-lsp-worker", daemon=True)
        self._thread.start()

    def submit(self, priority: int, function: Callable[..., Any], *args: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((priority, next(self._order), function, args, future))
        return future

    def _run(self) -> None:
        while True:
            _, _, function, args, future = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(function(*args))
            except BaseException as error:  # handed to the request that waits for it
                future.set_exception(error)


class LineMap:
    """Character offsets of a text to LSP positions and back, in the negotiated encoding
    (UTF-16 code units unless the client offered UTF-32 or UTF-8)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self.starts = starts

    def _units(self, piece: str) -> int:
        if self.encoding == "utf-32" or piece.isascii():
            return len(piece)
        if self.encoding == "utf-8":
            return len(piece.encode("utf-8", "surrogatepass"))
        return len(piece.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, offset: int) -> types.Position:
        import bisect

        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return types.Position(line, self._units(self.text[self.starts[line] : offset]))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.position(start), self.position(end))

    def offset(self, position: types.Position) -> int:
        if position.line >= len(self.starts):
            return len(self.text)
        begin = self.starts[position.line]
        stop = self.starts[position.line + 1] - 1 if position.line + 1 < len(self.starts) else None
        line = self.text[begin:stop]
        if self.encoding == "utf-32" or line.isascii():
            return begin + min(position.character, len(line))
        units = 0
        for k, char in enumerate(line):
            if units >= position.character:
                return begin + k
            units += self._units(char)
        return begin + len(line)


class _Open:
    """What the server holds for one open file."""

    def __init__(self) -> None:
        self.analysis: FileAnalysis | None = None
        self.lines: LineMap | None = None
        self.pending: asyncio.Task[Any] | None = None
        self.background: concurrent.futures.Future[Any] | None = None
        #: the analysis the background work is for (a change starts it again for the new one)
        self.background_for: FileAnalysis | None = None


class HloLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("hloidx", _version())
        self.worker = Worker()
        self.open: dict[str, _Open] = {}
        self.kept: OrderedDict[str, tuple[FileAnalysis, LineMap]] = OrderedDict()
        self.device = DEFAULT_DEVICE
        self.inlay_hints = True
        self.debounce = DEBOUNCE

    # -- settings -------------------------------------------------------------------------------
    def configure(self, settings: Any) -> None:
        """``{"hloidx": {"device": "h100", "inlayHints": false}}`` or the inner object."""
        if not isinstance(settings, dict):
            return
        settings = settings.get("hloidx", settings)
        if not isinstance(settings, dict):
            return
        device = settings.get("device")
        if isinstance(device, str) and device:
            from ..gpu.devices import device_profile

            try:
                device_profile(device)
                self.device = device
            except Exception as error:
                self.window_show_message(
                    types.ShowMessageParams(
                        types.MessageType.Warning,
                        f"hloidx: unknown device {device!r} ({error}); keeping {self.device}",
                    )
                )
        if settings.get("names") in ("plain", "roles"):
            FileAnalysis.names = settings["names"]
        hints = settings.get("inlayHints")
        if isinstance(hints, bool):
            self.inlay_hints = hints
        delay = settings.get("debounce")
        if isinstance(delay, int | float) and 0 <= delay <= 10:
            self.debounce = float(delay)

    # -- analysis -------------------------------------------------------------------------------
    def encoding(self) -> str:
        value = self.workspace.position_encoding
        return str(getattr(value, "value", value) or "utf-16")

    def schedule(self, uri: str, delay: float) -> None:
        state = self.open.setdefault(uri, _Open())
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
        state.pending = asyncio.ensure_future(self._analyse(uri, delay))

    async def _analyse(self, uri: str, delay: float) -> FileAnalysis | None:
        if delay:
            await asyncio.sleep(delay)
        state = self.open.get(uri)
        if state is None:
            return None
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        digest = content_hash(text)
        kept = self.kept.get(digest)
        if kept is None:
            # the parse's errors are published first; the index (and its warnings) follows
            logger.info("analysing %s (%d characters)", uri, len(text))
            future = self.worker.submit(_ANALYSIS, self._build, uri, text)
            kept = await asyncio.shield(asyncio.wrap_future(future))
            if self.open.get(uri) is state:
                self.publish(uri, version, *kept)
            logger.info("parsed %s: %d diagnostics", uri, len(kept[0].diagnostics))
            before = len(kept[0].diagnostics)
            await asyncio.shield(asyncio.wrap_future(self.worker.submit(_ANALYSIS, kept[0].finish)))
            if len(kept[0].diagnostics) == before:
                version = None  # nothing new to publish
            self.kept[digest] = kept
            while len(self.kept) > KEPT:
                self.kept.popitem(last=False)
        else:
            self.kept.move_to_end(digest)
        if self.open.get(uri) is not state:
            return kept[0]
        state.analysis, state.lines = kept
        if version is not None:
            self.publish(uri, version, *kept)
        self.start_background(state, kept[0])
        return kept[0]

    def _build(self, uri: str, text: str) -> tuple[FileAnalysis, LineMap]:
        name = uri.rsplit("/", 1)[-1] or uri
        analysis = FileAnalysis(name, text)
        analysis.parse()
        return analysis, LineMap(text, self.encoding())

    def publish(
        self, uri: str, version: int | None, analysis: FileAnalysis, lines: LineMap
    ) -> None:
        diagnostics = []
        shown = analysis.diagnostics[:MAX_DIAGNOSTICS]
        for d in shown:
            severity = (
                types.DiagnosticSeverity.Error
                if d.severity == "error"
                else types.DiagnosticSeverity.Warning
            )
            diagnostics.append(
                types.Diagnostic(lines.range(d.start, d.end), d.message, severity, source="hloidx")
            )
        hidden = len(analysis.diagnostics) - len(shown)
        if hidden > 0:
            last = shown[-1]
            diagnostics.append(
                types.Diagnostic(
                    lines.range(last.start, last.end),
                    f"{hidden} more problems not shown",
                    types.DiagnosticSeverity.Information,
                    source="hloidx",
                )
            )
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri, diagnostics, version)
        )

    def start_background(self, state: _Open, analysis: FileAnalysis) -> None:
        """Analyse every instruction, then estimate every kernel (default device), a slice
        at a time on the worker; a request goes first between two slices."""
        if analysis.fully_analysed or state.background_for is analysis:
            return
        state.background_for = analysis
        steps = analysis.analyse_all()
        loop = asyncio.get_running_loop()
        device = self.device
        kernels = iter([])

        def step() -> bool:
            nonlocal kernels
            if not analysis.fully_analysed:
                next(steps, None)
                if analysis.fully_analysed:
                    kernels = iter(analysis.kernel_instructions())
                return True
            batch = list(itertools.islice(kernels, 50))
            for instr in batch:
                analysis.cost(instr.computation, instr.name, device)
            return bool(batch)

        def chain(future: concurrent.futures.Future[Any]) -> None:
            try:
                more = future.result()
            except Exception as error:  # the background work stops; requests still answer
                logger.warning("hloidx background analysis stopped: %s", error)
                return
            if more and any(s.analysis is analysis for s in self.open.values()):
                state.background = self.worker.submit(_BACKGROUND, step)
                state.background.add_done_callback(chain)
            elif not more:
                loop.call_soon_threadsafe(self._analysed, analysis)

        state.background = self.worker.submit(_BACKGROUND, step)
        state.background.add_done_callback(chain)

    def _analysed(self, analysis: FileAnalysis) -> None:
        """Every map and estimate is in: ask the client to fetch hints and lenses again."""
        capabilities = self.client_capabilities.workspace
        try:
            if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
                self.workspace_code_lens_refresh(None)
            if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
                self.workspace_inlay_hint_refresh(None)
        except Exception as error:  # pragma: no cover - a client that went away
            logger.warning("refresh failed: %s", error)
        self.protocol.notify("hloidx/analysed", {"name": analysis.name, "digest": analysis.digest})

    async def current(self, uri: str) -> tuple[FileAnalysis, LineMap] | None:
        """The analysis of the file's present text (waiting for it when it is under way)."""
        state = self.open.get(uri)
        if state is None:
            return None
        document = self.workspace.get_text_document(uri)
        if state.analysis is None or state.analysis.digest != content_hash(document.source):
            if state.pending is None or state.pending.done():
                self.schedule(uri, 0)
            try:
                await asyncio.shield(state.pending)
            except asyncio.CancelledError:
                # superseded by a newer change: wait for that one
                if state.pending is not None:
                    await asyncio.shield(state.pending)
        if state.analysis is None or state.lines is None:
            return None
        return state.analysis, state.lines

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` on the worker, before any background work."""
        return await asyncio.wrap_future(self.worker.submit(_REQUEST, function, *args))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hloidx")
    except PackageNotFoundError:  # a checkout that is not installed
        return "unknown"


def build_server() -> HloLanguageServer:
    server = HloLanguageServer()
    _register(server)
    return server


def _register(server: HloLanguageServer) -> None:
    @server.feature(types.INITIALIZED)
    def initialized(ls: HloLanguageServer, params: types.InitializedParams) -> None:
        return None

    @server.feature(types.INITIALIZE)
    def initialize(ls: HloLanguageServer, params: types.InitializeParams) -> None:
        ls.configure(params.initialization_options)
        ls.worker.submit(_ANALYSIS, _warm_up)  # the parser's imports, before the first file

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: HloLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.configure(params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: HloLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: HloLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: HloLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        state = ls.open.pop(uri, None)
        if state is not None and state.pending is not None:
            state.pending.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: HloLanguageServer, params: types.HoverParams) -> types.Hover | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        offset = lines.offset(params.position)
        answer = await ls.run(analysis.hover, offset, ls.device)
        if answer is None:
            return None
        text, start, end = answer
        return types.Hover(
            types.MarkupContent(types.MarkupKind.Markdown, text), lines.range(start, end)
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: HloLanguageServer, params: types.DefinitionParams
    ) -> list[types.Location] | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        targets = analysis.definition(lines.offset(params.position))
        uri = params.text_document.uri
        return [types.Location(uri, lines.range(s, e)) for s, e in targets] or None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(
        ls: HloLanguageServer, params: types.ReferenceParams
    ) -> list[types.Location] | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        refs = analysis.references(
            lines.offset(params.position), params.context.include_declaration
        )
        uri = params.text_document.uri
        return [types.Location(uri, lines.range(r.start, r.end)) for r in refs] or None

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    async def highlight(
        ls: HloLanguageServer, params: types.DocumentHighlightParams
    ) -> list[types.DocumentHighlight] | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        refs = analysis.references(lines.offset(params.position))
        return [
            types.DocumentHighlight(
                lines.range(r.start, r.end),
                types.DocumentHighlightKind.Write
                if r.is_definition
                else types.DocumentHighlightKind.Read,
            )
            for r in refs
        ] or None

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbols(
        ls: HloLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        return await ls.run(_document_symbols, analysis, lines)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbols(
        ls: HloLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        query = params.query.lower().lstrip("%")
        out: list[types.WorkspaceSymbol] = []
        for uri, state in list(ls.open.items()):
            if state.analysis is None or state.lines is None:
                continue
            out.extend(_workspace_symbols(uri, state.analysis, state.lines, query, 1000 - len(out)))
            if len(out) >= 1000:
                break
        return out

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(
        ls: HloLanguageServer, params: types.InlayHintParams
    ) -> list[types.InlayHint] | None:
        if not ls.inlay_hints:
            return None
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        start = lines.offset(params.range.start)
        end = lines.offset(params.range.end)
        hints = await ls.run(analysis.inlay_hints, start, end)
        return [
            types.InlayHint(
                lines.position(offset),
                label,
                kind=types.InlayHintKind.Parameter,
                tooltip=tooltip,
                padding_left=True,
            )
            for offset, label, tooltip in hints
        ]

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(
        ls: HloLanguageServer, params: types.CodeLensParams
    ) -> list[types.CodeLens] | None:
        found = await ls.current(params.text_document.uri)
        if found is None:
            return None
        analysis, lines = found
        lenses = []
        for instr in analysis.fusions():
            key = (ls.device, instr.computation, instr.name)
            command = None
            if key in analysis.costs:
                title = analysis.lens_title(instr.computation, instr.name, ls.device)
                command = types.Command(title, "")
            lenses.append(
                types.CodeLens(
                    lines.range(instr.name_start, instr.name_end),
                    command,
                    data={
                        "uri": params.text_document.uri,
                        "computation": instr.computation,
                        "name": instr.name,
                    },
                )
            )
        return lenses

    @server.feature(types.CODE_LENS_RESOLVE)
    async def code_lens_resolve(ls: HloLanguageServer, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data if isinstance(lens.data, dict) else {}
        found = await ls.current(str(data.get("uri", "")))
        if found is None or "name" not in data:
            lens.command = types.Command("cost: unknown (the file is not open)", "")
            return lens
        analysis, _ = found
        title = await ls.run(
            analysis.lens_title, str(data.get("computation")), str(data["name"]), ls.device
        )
        lens.command = types.Command(title, "")
        return lens


def _warm_up() -> None:
    """Import the parser, the analysis and the printer (half a second) while the editor is
    still sending the first file."""
    from ..hlo.analysis import analyze_instruction  # noqa: F401
    from ..hlo.syntax import parse_hlo_lenient
    from ..maps.printer import format_map  # noqa: F401

    parse_hlo_lenient("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n}\n")


_SYMBOL_KINDS = {"computation": types.SymbolKind.Function, "instruction": types.SymbolKind.Variable}


def _document_symbols(analysis: FileAnalysis, lines: LineMap) -> list[types.DocumentSymbol]:
    def convert(symbol: Any) -> types.DocumentSymbol:
        return types.DocumentSymbol(
            name=symbol.name,
            kind=_SYMBOL_KINDS[symbol.kind],
            range=lines.range(symbol.start, symbol.end),
            selection_range=lines.range(symbol.selection_start, symbol.selection_end),
            detail=symbol.detail or None,
            children=[convert(c) for c in symbol.children] or None,
        )

    return [convert(s) for s in analysis.symbols()]


def _workspace_symbols(
    uri: str, analysis: FileAnalysis, lines: LineMap, query: str, limit: int
) -> list[types.WorkspaceSymbol]:
    out = []
    for comp in analysis.index.computations:
        if query in comp.name.lower():
            out.append(
                types.WorkspaceSymbol(
                    name=comp.name,
                    kind=types.SymbolKind.Function,
                    location=types.Location(uri, lines.range(comp.name_start, comp.name_end)),
                )
            )
        for instr in comp.instructions:
            if query and query in instr.name.lower():
                out.append(
                    types.WorkspaceSymbol(
                        name=instr.name,
                        kind=types.SymbolKind.Variable,
                        location=types.Location(uri, lines.range(instr.name_start, instr.name_end)),
                        container_name=comp.name,
                    )
                )
        if len(out) >= limit:
            return out[:limit]
    return out
