"""The ``hloidx`` command line: Click commands over the library, Rich/text/JSON rendering."""

from .main import cli, main

__all__ = ["cli", "main"]
