"""hloidx's version, in a module of its own: ``--version`` reads it without importing the API."""

__version__ = "0.1.0"
