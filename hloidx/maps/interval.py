"""Closed integer intervals ``[lower, upper]`` with saturating int64 arithmetic.

An interval with ``lower > upper`` is empty; every empty interval is normalised to
``Interval.EMPTY`` so that emptiness compares equal. Comparisons between intervals are
tri-state (``True``, ``False`` or ``None`` for "cannot tell"), like XLA's ``ComparisonResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def saturate(value: int) -> int:
    """Clamp a Python int into the int64 range (bounds never overflow, they saturate)."""
    if value > INT64_MAX:
        return INT64_MAX
    if value < INT64_MIN:
        return INT64_MIN
    return value


@dataclass(frozen=True, slots=True)
class Interval:
    lower: int
    upper: int

    EMPTY: ClassVar[Interval]
    FULL: ClassVar[Interval]

    def __post_init__(self) -> None:
        lower, upper = self.lower, self.upper
        if type(lower) is int and type(upper) is int and INT64_MIN <= lower <= upper <= INT64_MAX:
            return  # the common case: already normal, nothing to rewrite
        lower, upper = int(lower), int(upper)
        if lower > upper:
            lower, upper = 1, 0
        object.__setattr__(self, "lower", saturate(lower))
        object.__setattr__(self, "upper", saturate(upper))

    # -- predicates -------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        return self.lower > self.upper

    @property
    def is_point(self) -> bool:
        return self.lower == self.upper

    @property
    def is_feasible(self) -> bool:
        return self.lower <= self.upper

    def size(self) -> int:
        """Number of integers in the interval (0 when empty), exact as a Python int."""
        return max(0, self.upper - self.lower + 1)

    def contains(self, value: int | Interval) -> bool:
        if isinstance(value, Interval):
            return value.is_empty or (self.lower <= value.lower and value.upper <= self.upper)
        return self.lower <= value <= self.upper

    # -- set operations ---------------------------------------------------
    def intersect(self, other: Interval) -> Interval:
        return Interval(max(self.lower, other.lower), min(self.upper, other.upper))

    def union(self, other: Interval) -> Interval:
        """The smallest interval containing both (the convex hull)."""
        if self.is_empty:
            return other
        if other.is_empty:
            return self
        return Interval(min(self.lower, other.lower), max(self.upper, other.upper))

    # -- arithmetic (sound over-approximations, saturating) ----------------
    def __add__(self, other: Interval | int) -> Interval:
        other = _as_interval(other)
        if self.is_empty or other.is_empty:
            return Interval.EMPTY
        return Interval(self.lower + other.lower, self.upper + other.upper)

    def __neg__(self) -> Interval:
        if self.is_empty:
            return self
        return Interval(-self.upper, -self.lower)

    def __sub__(self, other: Interval | int) -> Interval:
        return self + (-_as_interval(other))

    def __mul__(self, other: Interval | int) -> Interval:
        other = _as_interval(other)
        if self.is_empty or other.is_empty:
            return Interval.EMPTY
        products = (
            self.lower * other.lower,
            self.lower * other.upper,
            self.upper * other.lower,
            self.upper * other.upper,
        )
        return Interval(min(products), max(products))

    def floordiv(self, divisor: int) -> Interval:
        """``[l, u] floordiv c`` for a constant ``c != 0``."""
        if self.is_empty:
            return self
        a, b = self.lower // divisor, self.upper // divisor
        return Interval(min(a, b), max(a, b))

    def ceildiv(self, divisor: int) -> Interval:
        if self.is_empty:
            return self
        a, b = -(-self.lower // divisor), -(-self.upper // divisor)
        return Interval(min(a, b), max(a, b))

    def mod(self, divisor: int) -> Interval:
        """``[l, u] mod c`` for a constant ``c > 0`` (floor semantics: result in [0, c-1])."""
        if self.is_empty:
            return self
        if divisor <= 0:
            return Interval.FULL
        if self.upper - self.lower < divisor and self.lower // divisor == self.upper // divisor:
            return Interval(self.lower % divisor, self.upper % divisor)
        return Interval(0, divisor - 1)

    def min(self, other: Interval) -> Interval:
        if self.is_empty or other.is_empty:
            return Interval.EMPTY
        return Interval(min(self.lower, other.lower), min(self.upper, other.upper))

    def max(self, other: Interval) -> Interval:
        if self.is_empty or other.is_empty:
            return Interval.EMPTY
        return Interval(max(self.lower, other.lower), max(self.upper, other.upper))

    # -- tri-state comparisons ------------------------------------------------
    def lt(self, other: Interval | int) -> bool | None:
        """True if every value of self is < every value of other, False if none is, else None."""
        other = _as_interval(other)
        if self.upper < other.lower:
            return True
        if self.lower >= other.upper:
            return False
        return None

    def le(self, other: Interval | int) -> bool | None:
        other = _as_interval(other)
        if self.upper <= other.lower:
            return True
        if self.lower > other.upper:
            return False
        return None

    def gt(self, other: Interval | int) -> bool | None:
        return _as_interval(other).lt(self)

    def ge(self, other: Interval | int) -> bool | None:
        return _as_interval(other).le(self)

    def eq(self, other: Interval | int) -> bool | None:
        other = _as_interval(other)
        if self.is_point and other.is_point and self.lower == other.lower:
            return True
        if self.intersect(other).is_empty:
            return False
        return None

    def __str__(self) -> str:
        return f"[{self.lower}, {self.upper}]"

    def __repr__(self) -> str:
        return f"Interval({self.lower}, {self.upper})"


def _as_interval(value: Interval | int) -> Interval:
    return value if isinstance(value, Interval) else Interval(value, value)


Interval.EMPTY = Interval(1, 0)
Interval.FULL = Interval(INT64_MIN, INT64_MAX)


# Hot paths (range evaluation) build many intervals whose ends are already normal; writing the
# slots through their descriptors skips the frozen dataclass's ``__init__``.
_new = object.__new__
_set_lower = Interval.lower.__set__  # type: ignore[attr-defined]
_set_upper = Interval.upper.__set__  # type: ignore[attr-defined]


def make_interval(lower: int, upper: int) -> Interval:
    """``Interval(lower, upper)`` for int ends, cheaper when they are already normal."""
    if INT64_MIN <= lower <= upper <= INT64_MAX:
        interval = _new(Interval)
        _set_lower(interval, lower)
        _set_upper(interval, upper)
        return interval
    return Interval(lower, upper)
