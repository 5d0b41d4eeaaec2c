"""DataFrames of results. pandas is an optional extra: ``pip install -e '.[notebook]'``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import HloidxError

EXTRA = "pip install -e '.[notebook]'"


def pandas() -> Any:
    """The pandas module, or an error that names the extra to install."""
    try:
        import pandas
    except ImportError:
        raise HloidxError(f"to_pandas() needs pandas: {EXTRA}") from None
    return pandas


def frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> Any:
    """A DataFrame of ``rows`` with exactly ``columns``, in that order (also when empty);
    unknown numbers (None) become NaN in numeric columns."""
    return pandas().DataFrame.from_records(rows, columns=list(columns))
