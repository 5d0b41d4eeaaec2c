"""What every result object shares: ``str()`` is the command line's text, ``as_dict()`` its
JSON document, and the displays of Jupyter (``_repr_html_``), IPython terminals
(``_repr_pretty_``) and Rich consoles (``__rich__``) come from those two and from
:meth:`Display.html`."""

from __future__ import annotations

from typing import Any


class Display:
    """A result shown three ways: subclasses give :meth:`text`, :meth:`as_dict` and
    :meth:`html` (an HTML fragment, self-contained: no script, no network)."""

    def text(self) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from .html import fragment

        return fragment(self.html())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.text())

    def __rich__(self) -> Any:
        # Rich is the renderers': reached through them, only when a Rich console asks
        from ..render.plain import rich_text

        return rich_text(self.text())
