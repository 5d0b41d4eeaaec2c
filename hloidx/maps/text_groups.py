"""The distinct parenthesised groups of map text, each written once.

Maps written out by composition restate the same parenthesised group many times over (a
reshape chain restates its linear index in every digit, and every digit in the next step): an
18 KB text may hold 300 copies of one group and only twenty distinct ones. :func:`fold_groups`
walks the parentheses of a text with ``str.find`` and recognises a group seen before with one
``str.startswith`` (in C, however long the group), so the work done in Python grows with the
distinct groups, not with the text. Each distinct group becomes a name (``#0``, ``#1``, ...
in the order the groups close, so a group's inner groups are named before it), and the fast
reader reads every group once, from its folded text.

A group at position ``o`` is recognised by its whole text: a group is balanced, so a filed
group that the text at ``o`` starts with is exactly the group that opens at ``o``.
"""

from __future__ import annotations

#: A group is filed under its first characters: enough to tell most groups apart, so that few
#: candidates are compared at each parenthesis.
_KEY_LENGTH = 24
#: At most this many groups are filed under one key: each "(" compares its text with every
#: group filed under its key, and text written to defeat the key must not make that quadratic.
_MAX_CANDIDATES = 16

#: What may stand between a call's name or the arrow and its parenthesis (str.split's blanks
#: are a superset: a rarer blank makes a call look like a group, and the reader then gives up).
_BLANKS = " \t\n\r"

#: What a group's parenthesis usually follows: another one, or an operator and a blank.
_OPENERS = "("
_AFTER_OPERATORS = frozenset(f"{mark} " for mark in "+-*/%,:")

#: A parenthesis after these is no group: ``min(a, b)``, ``max(a, b)``, or the results list.
_NOT_GROUPS = ("min", "max")


def group_name(index: int) -> str:
    """The name of the ``index``-th distinct group (no variable name or number looks so)."""
    return f"#{index}"


#: The first names, written by group_name once (each group's name is asked for twice, by the
#: folder, blank either side, and by the reader): ``GROUP_NAMES[i]`` is ``group_name(i)``.
GROUP_NAMES = tuple(map(group_name, range(1024)))
_SPACED_NAMES = tuple(f" {name} " for name in GROUP_NAMES)


def _spaced_name(index: int) -> str:
    """The ``index``-th group's name as the folded text writes it, a blank either side."""
    return _SPACED_NAMES[index] if index < len(_SPACED_NAMES) else f" {group_name(index)} "


def fold_groups(text: str, start: int) -> tuple[list[str], str] | None:
    """``text[start:]`` with every parenthesised group replaced by its name, and the distinct
    groups' inner texts in naming order (each with its own inner groups replaced); None when
    the parentheses do not balance.

    ``start`` is where the results list may open (just after the arrow): the first
    parenthesis there, and any after ``min`` or ``max``, is kept as written (its contents
    folded). Names are written with a blank either side, so they stay tokens of their own.
    """
    find = text.find
    starts = text.startswith
    # Groups without inner parentheses by their whole text, longer ones under their first
    # _KEY_LENGTH characters (their end is not known until they are read).
    innermost: dict[str, str] = {}
    filed: dict[str, list[tuple[str, str]]] = {}
    groups: list[str] = []
    pieces: list[str] = []  # the folded text of the level being read
    # the enclosing levels: where each opened, its pieces, and whether it is a group
    levels: list[tuple[int, list[str], bool]] = []
    at = start
    next_open = find("(", at)
    next_close = find(")", at)
    while True:
        if next_open < 0 or next_open > next_close:  # a level closes, or the text ends
            if next_close < 0:
                break
            closing = next_close
            if not levels:
                return None
            pieces.append(text[at:closing])
            opening, outer, is_group = levels.pop()
            inner = "".join(pieces)
            if is_group:
                name = _spaced_name(len(groups))
                groups.append(inner)
                raw = text[opening : closing + 1]
                if len(raw) >= _KEY_LENGTH:  # shorter ones are read again (a few tokens)
                    key = raw[:_KEY_LENGTH]
                    candidates = filed.get(key)
                    if candidates is None:
                        filed[key] = [(raw, name)]
                    elif len(candidates) < _MAX_CANDIDATES:  # more are read again
                        candidates.append((raw, name))
                outer.append(name)
            else:
                outer.append(f"({inner})")
            pieces = outer
            at = closing + 1
            next_close = find(")", at)  # the next "(" is still ahead
            continue
        opening = next_open
        following = find("(", opening + 1)
        if following < 0 or following > next_close:
            # no group inside: its whole text is known, and names it if it was seen before
            raw = text[opening : next_close + 1]
            name = innermost.get(raw)
            if name is None and _is_group(text, opening, start):
                name = _spaced_name(len(groups))
                innermost[raw] = name
                groups.append(raw[1:-1])
            pieces.append(text[at:opening])
            pieces.append(raw if name is None else name)
            at = next_close + 1
            next_open = following
            next_close = find(")", at)
            continue
        candidates = filed.get(text[opening : opening + _KEY_LENGTH])
        if candidates is not None:
            seen = None
            for raw, name in candidates:
                if starts(raw, opening):
                    seen = name
                    break
            if seen is not None:
                pieces.append(text[at:opening])
                pieces.append(seen)
                at = opening + len(raw)
                next_open = find("(", at)
                next_close = find(")", at)
                continue
        pieces.append(text[at:opening])
        # _is_group's usual case first, without the call
        is_group = (
            text[opening - 1] == "("
            or text[opening - 2 : opening] in _AFTER_OPERATORS
            or _is_group(text, opening, start)
        )
        levels.append((opening, pieces, is_group))
        pieces = []
        at = opening + 1
        next_open = following
    if levels or next_open >= 0:
        return None
    pieces.append(text[at:])
    return groups, "".join(pieces)


def _is_group(text: str, opening: int, start: int) -> bool:
    """Whether the parenthesis at ``opening`` opens a group (not a call's or the results')."""
    if text[opening - 1] in _OPENERS or text[opening - 2 : opening] in _AFTER_OPERATORS:
        return True  # the usual case: after "(" or an operator (a call's name is no operator)
    before = opening
    while before > start and text[before - 1] in _BLANKS:
        before -= 1
    return before > start and not text.endswith(_NOT_GROUPS, start, before)


__all__ = ["GROUP_NAMES", "fold_groups", "group_name"]
