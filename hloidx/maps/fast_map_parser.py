"""A fast path for reading well-formed maps: every distinct parenthesised group is cut out
once (.text_groups), tokens are cut by spacing out punctuation and splitting on white space,
and a small reader follows ``grammars/indexing_map.lark`` rule for rule and builds the map
through the same builders as the Lark transformer (so the result is the same object).

It gives up (returns None) at the first thing it does not expect, and the caller then runs the
Lark parser, which accepts or rejects the text and words any error: the grammar stays the one
definition of the format, and this reader only makes the common case cheap (a Lark parse costs
about six times as much, mostly in its generic lexer and parser loop).
"""

from __future__ import annotations

from collections.abc import Sequence

from .expr import (
    Add,
    BinaryExpr,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    VarKind,
    add_left,
    ceildiv,
    const,
    floordiv,
    max_,
    min_,
    mod,
    mul,
)
from .indexing_map import Constraint, IndexingMap, OpenVariable, Variable
from .interval import INT64_MAX, INT64_MIN, Interval, make_interval
from .map_tokens import (
    DEFAULT_LEAVES,
    DEFAULT_LISTS,
    DEFAULT_NAMES,
    LISTED,
    NATURALS,
    NO_NAMES,
    OPERATORS,
    SPACED_ALL,
    UP_TO,
    cut,
    cut_at_brackets,
)
from .nodes import _VAR_CACHE
from .text_groups import GROUP_NAMES, fold_groups, group_name

#: Between the declarations, each group's text and the results (no map text holds it).
_SEPARATOR = "#"
_KEYWORDS = frozenset(
    (
        "domain",
        "in",
        "mod",
        "floordiv",
        "floorDiv",
        "ceildiv",
        "min",
        "max",
        "is_simplified",
        "true",
        "false",
        "UNDEFINED",  # and "KNOWN EMPTY": the grammar's words for maps without a domain
        "KNOWN",
        "EMPTY",
    )
)
#: Each product operator's builder and the class of the node it makes of ``x op c``.
_PRODUCT = {
    "*": (mul, Mul),
    "/": (floordiv, FloorDiv),
    "floordiv": (floordiv, FloorDiv),
    "floorDiv": (floordiv, FloorDiv),
    "ceildiv": (ceildiv, CeilDiv),
    "mod": (mod, Mod),
    "%": (mod, Mod),
}
_END = ""  # the token after the last one
_MERGING = (Add, Mul)  # what ``mul`` rewrites when a constant multiplies it
_new_binary = BinaryExpr.__new__  # without type.__call__, as the builders make nodes
_new_object = object.__new__  # Variable and Interval without their dataclass initialisers
_PADDING = [_END] * 6  # a group is filed under its first four tokens; an interval has six
#: Texts at least this long (after the arrow) are folded into their distinct groups first
#: (.text_groups); in shorter ones, the reader's own memo of runs costs less.
_FOLD_FROM = 2300


class _OpenInterval(Interval):
    """An Interval being filled in: plain slot stores, then sealed by taking the class
    Interval, whose frozen dataclass makes each store a call (see nodes._OpenBinary)."""

    __slots__ = ()
    __setattr__ = object.__setattr__  # both: they share one type slot
    __delattr__ = object.__delattr__


class _GiveUp(Exception):
    pass


def _is_name(token: str) -> bool:
    return token.isidentifier() and token.isascii() and token not in _KEYWORDS


#: groups filed under one prefix: (number of tokens, the tokens, the tree)
_Filed = list[tuple[int, list[str], Expr]]


class _Reader:
    __slots__ = ("at", "groups", "leaves", "tokens")

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0
        # Maps written out by composition repeat the same parenthesised subexpression many
        # times over (a reshape chain restates its linear index in every digit): each
        # distinct group is built once. The builders are pure, so a repeat is the same tree.
        # Groups are filed under their first few tokens, as (tokens, tree): where a group
        # ends is not known before it is read, but a filed one is recognised by comparing
        # its tokens (a balanced run followed by ")" can only be the whole group).
        self.groups: dict[tuple[str, ...], _Filed] = {}
        # Variables by name, numbers by their digits and, in a long text, groups by their
        # names (.text_groups): the leaves, read without a call.
        self.leaves: dict[str, Expr] = {}

    def take(self, value: str) -> str:
        token = self.tokens[self.at]
        if token != value:
            raise _GiveUp
        self.at += 1
        return token

    def accept(self, value: str) -> bool:
        if self.tokens[self.at] == value:
            self.at += 1
            return True
        return False

    # -- declarations ---------------------------------------------------------------
    def declare(self, close: str, kind: VarKind) -> Sequence[str]:
        tokens = self.tokens
        leaves = self.leaves
        at = self.at
        # The usual list, every variable under its default name (``d0, d1, d2``): recognised
        # by one comparison of its tokens, and declared by one update.
        end = tokens.index(close, at)
        count = (end - at + 1) >> 1
        if count < LISTED:
            listed = DEFAULT_LISTS[kind]
            if tokens[at : end + 1] == listed[count] and leaves.keys().isdisjoint(
                DEFAULT_LEAVES[kind][count]
            ):
                leaves.update(DEFAULT_LEAVES[kind][count])
                self.at = end + 1
                return NO_NAMES[count]
        cache = _VAR_CACHE[kind]
        names: list[str] = []
        if tokens[at] == close:
            self.at = at + 1
            return names
        while True:
            name = tokens[at]
            if not _is_name(name) or name in leaves:  # declared twice (numbers are never names)
                raise _GiveUp
            index = len(names)
            var = cache.get(index)
            leaves[name] = var if var is not None else Var(kind, index)
            names.append(name)
            token = tokens[at + 1]
            at += 2
            if token == close:
                break
            if token != ",":
                raise _GiveUp
        self.at = at
        defaults = DEFAULT_NAMES[kind]
        if len(names) <= len(defaults):
            return ["" if n == d else n for n, d in zip(names, defaults, strict=False)]
        prefix = kind.prefix
        return ["" if n == f"{prefix}{i}" else n for i, n in enumerate(names)]

    # -- expressions ------------------------------------------------------------------
    def expr(self) -> Expr:
        """A sum of products, folded left as the grammar's rules nest them.

        One loop for both precedence levels (a call per level per operand was most of the
        reader's cost); only groups, unary minus, large numbers and min/max take a call (in a
        long text, .text_groups made every group a leaf, read once before the results).
        """
        tokens = self.tokens
        leaves = self.leaves
        at = self.at
        summands: list[Expr] = []
        subtract = False
        # the pending operator's builder and node class, once read (``product`` is set by the
        # first operand: no operator is pending then)
        build = direct = None
        while True:
            token = tokens[at]
            operand = leaves.get(token)  # a variable or a number seen before: no call
            if operand is not None:
                at += 1
            elif token == "(":
                operand = self.read_once(at + 1, ")")
                at = self.at + 1
            elif token in NATURALS:  # a number read for the first time: a leaf from now on
                operand = leaves[token] = const(NATURALS[token])
                at += 1
            else:
                self.at = at
                operand = self.operand()
                at = self.at
            if build is None:
                product = operand
            elif type(operand) is Const:
                c = operand.value
                if c <= 0 and build is not mul and (c == 0 or build is mod):
                    # zero (the Lark path words the error) or a negative modulus; a negative
                    # divisor of floordiv/ceildiv is XLA's ``x floordiv -c``, the builder's
                    raise _GiveUp
                # The builder's commonest case, taken without the call: a new node ``x op c``
                # (no fold applies: c is not 0 or 1, x no constant, and a product is neither
                # a sum to distribute over nor a product to merge).
                if (
                    c > 1
                    and type(product) is not Const
                    and (build is not mul or type(product) not in _MERGING)
                ):
                    product = _new_binary(direct, product, operand)
                else:
                    product = build(product, operand)
            else:
                product = build(product, operand)
            token = tokens[at]
            operator = _PRODUCT.get(token)
            if operator is not None:
                build, direct = operator
                at += 1
                continue
            build = None
            summands.append(mul(product, -1) if subtract else product)  # type: ignore[arg-type]
            if token == "+":
                subtract = False
            elif token == "-":
                subtract = True
            else:
                self.at = at
                # what folding add and sub left would give
                return summands[0] if len(summands) == 1 else add_left(summands)
            at += 1

    def operand(self) -> Expr:
        """A unary minus, a variable, a number, a parenthesised group or a min/max."""
        tokens = self.tokens
        at = self.at
        token = tokens[at]
        self.at = at + 1
        leaf = self.leaves.get(token)
        if leaf is not None:
            return leaf
        if token == "(":
            tree = self.read_once(at + 1, ")")
            self.at += 1  # the ")"
            return tree
        if token == "-":
            return mul(self.operand(), -1)
        value = NATURALS.get(token)
        if value is not None:
            leaf = self.leaves[token] = const(value)
            return leaf
        if token.isdigit():
            if not token.isascii():
                raise _GiveUp
            value = int(token)
            if value > INT64_MAX:
                raise _GiveUp
            leaf = self.leaves[token] = const(value)
            return leaf
        if token == "min" or token == "max":
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            return min_(a, b) if token == "min" else max_(a, b)
        raise _GiveUp

    def read_once(self, start: int, closer: str) -> Expr:
        """The expression whose tokens begin at ``start`` and end before ``closer`` (the ``)``
        of a group, or the ``in`` of a domain entry), read once however often it is written;
        ``self.at`` moves to the closer.

        Composed maps restate the same groups many times, and their constraints restate groups
        of the results (``(x floordiv 6) mod 3 in [0, 2]`` beside ``((x floordiv 6) mod 3) *
        2``). A run read before is recognised by its tokens followed by the closer: a filed run
        is balanced, so the ``)`` after it closes the group being read, and no expression
        holds the keyword ``in``.
        """
        tokens = self.tokens
        prefix = (tokens[start], tokens[start + 1], tokens[start + 2], tokens[start + 3])
        filed = self.groups.get(prefix)
        if filed is not None:
            last = len(tokens) - 1
            for length, run, tree in filed:
                stop = start + length
                if stop <= last and tokens[stop] == closer and tokens[start:stop] == run:
                    self.at = stop
                    return tree
        self.at = start
        tree = self.expr()
        end = self.at
        if tokens[end] != closer:
            raise _GiveUp
        # Looked up again: reading the run may have filed others under the same prefix.
        self.groups.setdefault(prefix, []).append((end - start, tokens[start:end], tree))
        return tree

    def domain(self) -> list[tuple[Expr, Interval]]:
        """The domain's entries, each its expression (everything up to its ``in``) and its
        interval, up to the end or ``is_simplified`` (read by the caller); one loop for all
        (a call per entry was most of what a domain cost)."""
        tokens = self.tokens
        leaves = self.leaves
        at = self.at
        entries: list[tuple[Expr, Interval]] = []
        while True:
            expr = leaves.get(tokens[at]) if tokens[at + 1] == "in" else None
            if expr is None:
                expr = self.read_once(at, "in")
                at = self.at
            else:
                at += 1  # a single name or number
            # The usual interval, ``in [lower, upper]`` with two small naturals, read here:
            # [0, n] is taken from a table, others made; the tables hold only ASCII digit
            # strings, so a hit needs no further check.
            keyword, bracket, lower, comma, upper, close = tokens[at : at + 6]
            interval = UP_TO.get(upper) if lower == "0" else None
            if interval is None:
                low = NATURALS.get(lower)
                high = NATURALS.get(upper)
                if low is not None and high is not None and low <= high:
                    interval = _new_object(_OpenInterval)  # filled in, then sealed
                    interval.lower = low
                    interval.upper = high
                    interval.__class__ = Interval
            if (
                interval is not None
                and keyword == "in"
                and bracket == "["
                and comma == ","
                and close == "]"
            ):
                at += 6
            else:
                self.at = at
                interval = self.interval()
                at = self.at
            entries.append((expr, interval))
            token = tokens[at]
            if token == ",":
                at += 1
                token = tokens[at]
                if token == _END:
                    raise _GiveUp  # a comma after the last entry
            if token == _END or token == "is_simplified":
                self.at = at
                return entries

    def group_texts(self, count: int) -> None:
        """The ``count`` groups' texts (a long text's, .text_groups), each after a separator and
        named as .text_groups names them (a group's inner groups come first). Each is filed as
        a run (distinct texts: none is looked up), so that a constraint restating one is
        recognised."""
        tokens = self.tokens
        leaves = self.leaves
        filed = self.groups
        end = self.at  # the separator before the first group (each ends at the next one's)
        if tokens[end] != _SEPARATOR:
            raise _GiveUp
        for index in range(count):
            start = end + 1
            self.at = start
            tree = self.expr()
            end = self.at
            if tokens[end] != _SEPARATOR:
                raise _GiveUp
            leaves[GROUP_NAMES[index] if index < 1024 else group_name(index)] = tree
            prefix = (tokens[start], tokens[start + 1], tokens[start + 2], tokens[start + 3])
            filed.setdefault(prefix, []).append((end - start, tokens[start:end], tree))
        self.at = end + 1

    def interval(self) -> Interval:
        """``in [lower, upper]``, either bound negative or large (.domain reads the usual)."""
        tokens = self.tokens
        at = self.at
        if tokens[at] != "in" or tokens[at + 1] != "[":
            raise _GiveUp
        lower = tokens[at + 2]
        at += 2
        if lower == "-":
            at += 1
            lower = "-" + tokens[at]
        if tokens[at + 1] != ",":
            raise _GiveUp
        at += 2
        upper = tokens[at]
        if upper == "-":
            at += 1
            upper = "-" + tokens[at]
        if tokens[at + 1] != "]":
            raise _GiveUp
        self.at = at + 2
        # int() also takes "+5", " 5", "5_0" and other scripts' digits: the bound must be
        # plain ASCII digits after the sign, as the grammar has it.
        if not (lower.lstrip("-").isdigit() and upper.lstrip("-").isdigit()):
            raise _GiveUp
        if not (lower.isascii() and upper.isascii()):
            raise _GiveUp
        low, high = int(lower), int(upper)
        if not (INT64_MIN <= low <= INT64_MAX and INT64_MIN <= high <= INT64_MAX):
            raise _GiveUp
        return make_interval(low, high)

    def simplified_flag(self) -> None:
        self.take("is_simplified")
        self.take(":")
        if not (self.accept("true") or self.accept("false")):
            raise _GiveUp


def fast_parse(text: str, default_bounds: Interval, max_depth: int) -> IndexingMap | None:
    """The map, or None when anything is out of the ordinary (then the Lark parser decides).

    ``max_depth`` bounds the levels of every expression (deeper ones go to the Lark path,
    which words the error).
    """
    arrow = text.find("->")
    if arrow < 0 or _SEPARATOR in text:
        return None  # UNDEFINED, KNOWN EMPTY, () or something out of the ordinary
    start = arrow + 2
    groups: tuple[str, ...] | list[str] = ()
    if len(text) - start >= _FOLD_FROM:
        folded = fold_groups(text, start)
        if folded is None:
            return None
        groups, rest = folded
    else:
        rest = text[start:]
    # The declarations, each group's text (the names of its inner groups are declared by
    # then), then the results and the domain, cut apart by separators.
    joined = f" {_SEPARATOR} ".join((text[:arrow], *groups, rest))
    # Printed maps write the operators with a blank either side: the brackets and commas are
    # spaced out first, and only a text that this does not read is cut again at its operators
    # (an operator glued to its neighbour is then part of a token that no rule accepts).
    read = _read(cut_at_brackets(joined), len(groups), default_bounds, max_depth)
    if read is None and any(mark in joined for mark in OPERATORS):
        return _read(cut(joined, SPACED_ALL), len(groups), default_bounds, max_depth)
    return read


def _read(
    tokens: list[str], group_count: int, default_bounds: Interval, max_depth: int
) -> IndexingMap | None:
    """The map that ``tokens`` (fast_parse's, the groups' texts among them) write, or None."""
    tokens += _PADDING
    r = _Reader(tokens)
    try:
        # (take and accept inlined: a map's fixed cost is much of what a small one costs)
        if tokens[0] != "(":
            raise _GiveUp
        r.at = 1
        names: list[Sequence[str]] = [r.declare(")", VarKind.DIM), (), ()]
        if tokens[r.at] == "[":
            r.at += 1
            names[1] = r.declare("]", VarKind.RANGE)
        if tokens[r.at] == "{":
            r.at += 1
            names[2] = r.declare("}", VarKind.RUNTIME)
        declared = list(r.leaves.values())  # the variables in order (no number is read yet)
        if group_count:
            r.group_texts(group_count)
        elif tokens[r.at] == _SEPARATOR:
            r.at += 1
        else:
            raise _GiveUp
        if tokens[r.at] != "(":
            raise _GiveUp
        r.at += 1
        results: list[Expr] = []
        if tokens[r.at] == ")":
            r.at += 1
        else:
            results.append(r.expr())
            while tokens[r.at] == ",":
                r.at += 1
                results.append(r.expr())
            if tokens[r.at] != ")":
                raise _GiveUp
            r.at += 1
        entries: list[tuple[Expr, Interval]] | None = None
        token = tokens[r.at]
        had_comma = token == ","
        if had_comma:
            r.at += 1
            token = tokens[r.at]
        if token == "domain":
            if tokens[r.at + 1] != ":":
                raise _GiveUp
            r.at += 2
            entries = r.domain()
            if tokens[r.at] == "is_simplified":
                r.simplified_flag()
        elif token == "is_simplified":
            r.simplified_flag()
        elif had_comma:
            raise _GiveUp
        if tokens[r.at] != _END:
            raise _GiveUp
    except (_GiveUp, IndexError, KeyError, ValueError, ArithmeticError, RecursionError):
        return None  # RecursionError: nesting deeper than this reader goes; Lark reads it
    try:
        return _assemble(tuple(results), names, declared, entries, default_bounds, max_depth)
    except (ValueError, ArithmeticError):
        return None


def _assemble(
    results: tuple[Expr, ...],
    names: list[list[str]],
    declared: list[Expr],
    entries: list[tuple[Expr, Interval]] | None,
    default_bounds: Interval,
    max_depth: int,
) -> IndexingMap | None:
    for e in results:
        if e.depth > max_depth:
            return None
    if entries is None:
        variables = [[Variable(default_bounds, n) for n in group] for group in names]
        return IndexingMap(results, *map(tuple, variables))
    if len(entries) < len(declared):
        return None
    variables: list[list[Variable]] = [[], [], []]
    # Each variable's entry first, in declaration order: the very leaf the reader declared
    # (a name resolves to that object, so identity is the test).
    for want, (expr, interval) in zip(declared, entries, strict=False):
        if expr is not want:
            return None
        variable = _new_object(OpenVariable)  # filled in, then sealed
        variable.bounds = interval
        variable.name = names[want.kind][want.index]
        variable.__class__ = Variable
        variables[want.kind].append(variable)
    constraints: list[Constraint] = []
    tightens = False
    for expr, interval in entries[len(declared) :]:
        if expr.depth > max_depth:
            return None
        tightens = tightens or type(expr) in (Var, Const)
        constraints.append((expr, interval))
    if tightens:
        return IndexingMap(results, *map(tuple, variables)).add_constraints(constraints)
    return IndexingMap(results, *map(tuple, variables), tuple(constraints))
