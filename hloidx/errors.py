"""The error family of hloidx. Every error can carry a span and renders as one located line."""

from __future__ import annotations

from .source import Span, escape_controls


class HloidxError(Exception):
    """Base of every error hloidx reports to a user (exit code 2 in the CLI)."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span

    def with_span(self, span: Span) -> HloidxError:
        """The same error located at ``span`` (kept if it already has one)."""
        if self.span is None:
            self.span = span
        return self

    def render(self) -> str:
        """``where:line:col: error: message`` plus the source line and a caret."""
        message = escape_controls(self.message)
        if self.span is None:
            return f"error: {message}"
        return f"{self.span.location()}: error: {message}\n{self.span.excerpt()}"

    def __str__(self) -> str:
        if self.span is None:
            return self.message
        return f"{self.span.location()}: {self.message}"


class MapSyntaxError(HloidxError):
    """Malformed indexing-map text."""


class HloSyntaxError(HloidxError):
    """Malformed HLO text."""


class HloSemanticError(HloidxError):
    """Well-formed HLO that does not make sense (unknown operand, two ROOTs, ...)."""


class UnsupportedOpError(HloidxError):
    """An opcode (or a form of one) that has no indexing rule."""


class DomainError(HloidxError):
    """An expression or map that cannot be evaluated: zero divisor, empty domain, too large."""


class EnumerationLimitError(DomainError):
    """Enumeration was asked of a domain larger than the allowed number of points."""
