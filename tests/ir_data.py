"""A parsed HLO module as plain data, for comparing two parses of one text."""

from __future__ import annotations

from hloidx.hlo.ir import HloModule


def _span(item) -> tuple[int, int] | None:
    return (item.span.start, item.span.end) if item.span else None


def ir_as_data(module: HloModule, *, positions: bool = False) -> tuple:
    """Names, shapes, operands, attributes, roots and literals of every computation; with
    ``positions``, also where each computation, instruction and attribute value was written
    (a round trip through the printer keeps the rest, not the positions)."""

    def instruction(i) -> tuple:
        placed = (i.attribute_offsets, _span(i)) if positions else ()
        return (
            i.name,
            i.opcode,
            i.shape,
            [o.name for o in i.operands],
            i.attributes,
            *placed,
            i.is_root,
            i.literal,
        )

    return (
        module.name,
        module.attributes,
        module.entry.name if module.entry else None,
        [
            (
                c.name,
                c.is_entry,
                *((_span(c),) if positions else ()),
                [instruction(i) for i in c.instructions],
            )
            for c in module.computations.values()
        ],
    )
