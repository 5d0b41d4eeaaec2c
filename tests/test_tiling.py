"""Symbolic tiling (``hloidx tile``): every tile checked against the provenance interpreter,
XLA's SymbolicTile expectations compared as element sets, and the seed examples."""

from __future__ import annotations

import json
import random
from itertools import pairwise, product
from math import prod

import numpy as np
import paths
import pytest
from click.testing import CliRunner

import hloidx
from hloidx.check.oracle import reads
from hloidx.cli.main import cli
from hloidx.hlo import fusion
from hloidx.maps.expr import Var, VarKind, const, dim
from hloidx.maps.traversal import evaluate, replace_vars
from hloidx.tiling.operand_tiles import MapTile, tile_instruction, tile_map
from hloidx.tiling.report import tiles_document

XLA_CASES = json.loads((paths.XLA_TESTS / "symbolic_tile_cases.json").read_text())["cases"]
TILING_DATA = paths.ROOT / "tests" / "data" / "tiling"


def _root(text: str):
    module = hloidx.parse_hlo(text)
    return module.entry.root


# ---------------------------------------------------------------------------
# The enumeration oracle: what the interpreter says a tile reads, against the description
# ---------------------------------------------------------------------------


def _sources_by_operand(evaluation) -> dict[int, dict[tuple[int, ...], set[tuple[int, ...]]]]:
    """The interpreter's provenance of output 0 regrouped once per evaluation: operand →
    output index → the operand elements it was computed from (so that each tile's lookup is
    a union, not a fresh walk over every element's provenance)."""
    cached = _SOURCES.get(id(evaluation))
    if cached is not None and cached[0] is evaluation:
        return cached[1]
    prov = evaluation.outputs[0].provenance
    grouped: dict[int, dict[tuple[int, ...], set[tuple[int, ...]]]] = {}
    for index in product(*(range(n) for n in prov.shape)):
        for op, _, source in prov[index]:
            grouped.setdefault(op, {}).setdefault(index, set()).add(tuple(map(int, source)))
    _SOURCES.clear()  # one evaluation at a time: keep memory flat
    _SOURCES[id(evaluation)] = (evaluation, grouped)
    return grouped


_SOURCES: dict[int, tuple[object, dict]] = {}


def _needed(evaluation, operand: int, tile_box) -> set[tuple[int, ...]]:
    by_index = _sources_by_operand(evaluation).get(operand, {})
    out: set[tuple[int, ...]] = set()
    for index in product(*(range(a, b) for a, b in tile_box)):
        found = by_index.get(index)
        if found:
            out |= found
    return out


def _rectangle_points(t: MapTile, tile_index, rt_values, operand_dims) -> set[tuple[int, ...]]:
    """The elements the description says tile ``tile_index`` reads (clipped to the operand)."""
    maps, formula = t.maps, t.formula
    held = t.held
    points = set()
    held_ranges = [range(maps.offset_map.range_vars[k].bounds.upper + 1) for k in range(len(held))]
    for loop in product(*held_ranges):
        values = {dim(i): v for i, v in enumerate(tile_index)}
        values.update({Var(VarKind.RANGE, k): v for k, v in enumerate(loop)})
        values.update({Var(VarKind.RUNTIME, k): v for k, v in enumerate(rt_values)})
        positions = {dim(i): tile_index[i] * _size(t, i) for i in range(len(tile_index))}
        for k, i in enumerate(held):
            positions[dim(i)] = tile_index[i] * _size(t, i) + loop[k]
        positions.update({Var(VarKind.RUNTIME, k): v for k, v in enumerate(rt_values)})
        if not all(iv.contains(int(evaluate(e, positions))) for e, iv in formula.when):
            continue
        axes = []
        for j, off in enumerate(maps.offset_map.results):
            o = int(evaluate(off, values))
            n, s = maps.sizes[j], maps.strides[j]
            values_j = {o + k * s for k in range(n)}
            clip = formula.dims[j].clip
            if clip is not None:
                values_j = {v for v in values_j if clip.contains(v)}
            axes.append(sorted(v for v in values_j if 0 <= v < operand_dims[j]))
        points |= set(product(*axes))
    return points


_SIZES: dict[int, tuple[int, ...]] = {}


def _size(t: MapTile, i: int) -> int:
    return _SIZES[id(t)][i]


def _rt_values(instr, cell, evaluation) -> list[int]:
    values = []
    for rv, var in zip(cell.runtime_vars, cell.maps[0].rt_vars, strict=True):
        value = evaluation.value_of(rv.producer)
        raw = int(np.asarray(value.values).reshape(-1)[0])
        values.append(max(var.bounds.lower, min(var.bounds.upper, raw)))
    return values


def check_against_interpreter(
    text: str, sizes_list, operand_values=None, max_tiles: int | None = None
) -> int:
    """Every tile of every size in ``sizes_list`` (or ``max_tiles`` of them, seeded, with the
    first and the last): full tiles read exactly the described elements, partial tiles (at
    the upper edge) a subset. Returns the tiles compared."""
    instr = _root(text) if isinstance(text, str) else text
    evaluation = reads(instr, operand_values=operand_values)
    row = fusion.output_to_input(instr)[0]
    extents = tuple(instr.shape.dims)
    compared = 0
    for sizes in sizes_list:
        result = tile_instruction(instr, sizes)
        for o in result.operands:
            if o.undefined or not o.map_tiles:
                continue
            dims = o.operand_dims
            for t in o.map_tiles:
                assert t.maps is not None, (sizes, o.name, t.reason)
                _SIZES[id(t)] = sizes
            rt = _rt_values(instr, row[o.index], evaluation) if row[o.index].runtime_vars else []
            counts = [-(-n // s) for n, s in zip(extents, sizes, strict=True)]
            every = list(product(*(range(c) for c in counts)))
            if max_tiles is not None and len(every) > max_tiles:
                chosen = random.Random(len(every)).sample(every[1:-1], max_tiles - 2)
                every = [every[0], *chosen, every[-1]]
            for tile_index in every:
                box = [
                    (i * s, min((i + 1) * s, n))
                    for i, s, n in zip(tile_index, sizes, extents, strict=True)
                ]
                full = all(
                    (i + 1) * s <= n for i, s, n in zip(tile_index, sizes, extents, strict=True)
                )
                needed = _needed(evaluation, o.index, box)
                described = set()
                for t in o.map_tiles:
                    described |= _rectangle_points(t, tile_index, rt, dims)
                if any(t.witness_tile == tile_index for t in o.map_tiles) and o.exact:
                    # the tool said this tile is not one rectangle: the interpreter agrees
                    assert not _strided_box(needed), (sizes, o.name, tile_index)
                if full and o.exact:
                    assert needed == described, (sizes, o.name, tile_index)
                else:
                    assert needed <= described, (sizes, o.name, tile_index)
                compared += 1
    return compared


def _strided_box(points: set[tuple[int, ...]]) -> bool:
    """Whether ``points`` is a product of arithmetic progressions (written for the test)."""
    if not points:
        return True
    rank = len(next(iter(points)))
    size = 1
    for k in range(rank):
        axis = sorted({p[k] for p in points})
        if len({b - a for a, b in pairwise(axis)}) > 1:
            return False
        size *= len(axis)
    return size == len(points)


def _all_sizes(extents, limit=60, seed=0):
    every = list(product(*(range(1, n + 1) for n in extents)))
    if len(every) <= limit:
        return every
    rng = random.Random(seed)
    picked = {tuple(extents), tuple(1 for _ in extents)}
    while len(picked) < limit:
        picked.add(rng.choice(every))
    return sorted(picked)


OPS = {
    "elementwise": "ENTRY e {\n p0 = f32[6,4] parameter(0)\n p1 = f32[6,4] parameter(1)\n ROOT a = f32[6,4] add(p0, p1)\n}",
    "broadcast": "ENTRY e {\n p0 = f32[4] parameter(0)\n ROOT b = f32[3,4,2] broadcast(p0), dimensions={1}\n}",
    "transpose": "ENTRY e {\n p0 = f32[3,4,5] parameter(0)\n ROOT t = f32[5,3,4] transpose(p0), dimensions={2,0,1}\n}",
    "bitcast": "ENTRY e {\n p0 = f32[2,3,4]{2,1,0} parameter(0)\n ROOT b = f32[6,4]{1,0} bitcast(p0)\n}",
    "reshape_collapse": "ENTRY e {\n p0 = f32[3,4,2] parameter(0)\n ROOT r = f32[12,2] reshape(p0)\n}",
    "reshape_expand": "ENTRY e {\n p0 = f32[24] parameter(0)\n ROOT r = f32[2,3,4] reshape(p0)\n}",
    "reshape_generic": "ENTRY e {\n p0 = f32[4,6] parameter(0)\n ROOT r = f32[6,4] reshape(p0)\n}",
    "slice": "ENTRY e {\n p0 = f32[12,10] parameter(0)\n ROOT s = f32[4,3] slice(p0), slice={[1:12:3], [2:8:2]}\n}",
    "pad": "ENTRY e {\n p0 = f32[4,3] parameter(0)\n v = f32[] parameter(1)\n ROOT p = f32[8,5] pad(p0, v), padding=2_2_0x1_1_0\n}",
    "pad_interior": "ENTRY e {\n p0 = f32[3,2] parameter(0)\n v = f32[] parameter(1)\n ROOT p = f32[7,4] pad(p0, v), padding=1_1_1x0_1_1\n}",
    "reverse": "ENTRY e {\n p0 = f32[5,4] parameter(0)\n ROOT r = f32[5,4] reverse(p0), dimensions={0}\n}",
    "concatenate": "ENTRY e {\n p0 = f32[2,3] parameter(0)\n p1 = f32[2,5] parameter(1)\n ROOT c = f32[2,8] concatenate(p0, p1), dimensions={1}\n}",
    "reduce": "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\nENTRY e {\n p0 = f32[5,6] parameter(0)\n c = f32[] constant(0)\n ROOT r = f32[6] reduce(p0, c), dimensions={0}, to_apply=add\n}",
    "dot": "ENTRY e {\n p0 = f32[2,3,4] parameter(0)\n p1 = f32[2,4,5] parameter(1)\n ROOT d = f32[2,3,5] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
    "iota_fusion": "f {\n p0 = s32[4,3] parameter(0)\n i = s32[4,3] iota(), iota_dimension=1\n ROOT a = s32[4,3] add(p0, i)\n}\nENTRY e {\n p0 = s32[4,3] parameter(0)\n ROOT x = s32[4,3] fusion(p0), kind=kLoop, calls=f\n}",
    "constant_fusion": "f {\n p0 = f32[3] parameter(0)\n c = f32[3] constant({1, 2, 3})\n ROOT a = f32[3] add(p0, c)\n}\nENTRY e {\n p0 = f32[3] parameter(0)\n ROOT x = f32[3] fusion(p0), kind=kLoop, calls=f\n}",
    "softmax_like": "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\nf {\n p0 = f32[4,6] parameter(0)\n c = f32[] constant(0)\n r = f32[4] reduce(p0, c), dimensions={1}, to_apply=add\n b = f32[4,6] broadcast(r), dimensions={0}\n ROOT d = f32[4,6] divide(p0, b)\n}\nENTRY e {\n p0 = f32[4,6] parameter(0)\n ROOT x = f32[4,6] fusion(p0), kind=kLoop, calls=f\n}",
    "transpose_of_reshape": "f {\n p0 = f32[12,2] parameter(0)\n r = f32[3,4,2] reshape(p0)\n ROOT t = f32[2,3,4] transpose(r), dimensions={2,0,1}\n}\nENTRY e {\n p0 = f32[12,2] parameter(0)\n ROOT x = f32[2,3,4] fusion(p0), kind=kLoop, calls=f\n}",
    "reduce_window_padded": "mx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT m = f32[] maximum(a, b)\n}\nENTRY e {\n p0 = f32[6,3] parameter(0)\n c = f32[] constant(0)\n ROOT r = f32[6,3] reduce-window(p0, c), window={size=3x1 pad=1_1x0_0}, to_apply=mx\n}",
    "slice_of_collapse": "f {\n p0 = f32[2,4,3] parameter(0)\n r = f32[8,3] reshape(p0)\n ROOT s = f32[3,3] slice(r), slice={[1:7:2], [0:3:1]}\n}\nENTRY e {\n p0 = f32[2,4,3] parameter(0)\n ROOT x = f32[3,3] fusion(p0), kind=kLoop, calls=f\n}",
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_tile_reads_what_the_interpreter_reads(name: str) -> None:
    text = "HloModule m\n" + OPS[name]
    extents = tuple(_root(text).shape.dims)
    assert check_against_interpreter(text, _all_sizes(extents)) > 0


def test_dynamic_slice_tiles_with_runtime_offsets() -> None:
    text = (
        "HloModule m\nENTRY e {\n src = s32[4,9] parameter(0)\n a = s32[] parameter(1)\n"
        " b = s32[] parameter(2)\n ROOT ds = s32[2,4] dynamic-slice(src, a, b), "
        "dynamic_slice_sizes={2,4}\n}"
    )
    for starts in ((1, 3), (5, -2), (0, 0)):
        values = {1: np.array(starts[0]), 2: np.array(starts[1])}
        assert check_against_interpreter(text, _all_sizes((2, 4)), values) > 0


@pytest.mark.parametrize("case", [c for c in XLA_CASES if "hlo" in c], ids=lambda c: c["name"])
def test_xla_hlo_cases_hold_against_the_interpreter(case) -> None:
    """Whatever hloidx says for XLA's test modules (a rectangle, a loop of rectangles), the
    interpreter confirms, including where XLA finds no tile."""
    instr = _root(case["hlo"])
    extents = tuple(instr.shape.dims)
    if prod(extents) > 30_000:
        pytest.skip("too large for the interpreter")
    values = None
    if instr.opcode in ("dynamic-slice", "dynamic-update-slice"):
        values = {
            k: np.array(3) for k in range(len(instr.operands)) if not instr.operands[k].shape.dims
        }
    big = prod(extents) > 400
    sizes = _all_sizes(extents, limit=8 if big else 25)
    assert check_against_interpreter(case["hlo"], sizes, values, max_tiles=12 if big else None) > 0


# ---------------------------------------------------------------------------
# XLA's expectations, compared as element sets for every admissible tile size
# ---------------------------------------------------------------------------


def _xla_conditions(text: str, dims_text: str):
    if not text:
        return []
    out = []
    for conj in text.split("||"):
        items = []
        for item in conj.split("&&"):
            expr, rng = item.strip().rsplit(" in ", 1)
            lo, hi = (int(x) for x in rng.strip("[] ").split(","))
            items.append((hloidx.parse_map(f"{dims_text} -> ({expr})").results[0], lo, hi))
        out.append(items)
    return out


def _holds(conditions, values) -> bool:
    if not conditions:
        return True
    return any(
        all(lo <= int(evaluate(e, values)) <= hi for e, lo, hi in conj) for conj in conditions
    )


def _axis(offset: int, size: int, stride: int) -> frozenset[int]:
    return frozenset(offset + k * stride for k in range(size))


def _xla_map_and_extents(case):
    if "map" in case:
        m = hloidx.parse_map(case["map"])
        return m, tuple(v.bounds.upper + 1 for v in m.dim_vars), None
    instr = _root(case["hlo"])
    cell = fusion.output_to_input(instr)[0][case["operand"]]
    return cell.maps[0], tuple(instr.shape.dims), instr


def _size_grid(extents, limit=3000, seed=1):
    total = prod(extents)
    if total <= limit:
        return list(product(*(range(1, n + 1) for n in extents)))
    rng = random.Random(seed)
    special = [
        sorted({1, n, *(d for d in range(1, min(n, 64) + 1) if n % d == 0)}) for n in extents
    ]
    grid = set()
    for _ in range(limit):
        grid.add(
            tuple(
                rng.choice(s) if rng.random() < 0.7 else rng.randint(1, n)
                for s, n in zip(special, extents, strict=True)
            )
        )
    return sorted(grid)


XLA_TILE_CASES = [c for c in XLA_CASES if c["expected"] is not None]


@pytest.mark.parametrize("case", XLA_TILE_CASES, ids=lambda c: c["name"])
def test_xla_symbolic_tiles_agree_as_element_sets(case) -> None:
    m, extents, instr = _xla_map_and_extents(case)
    expected = case["expected"]
    dims_text = expected["size_map"].split(" -> ")[0]
    xla_maps = {k: hloidx.parse_map(expected[k]) for k in ("offset_map", "size_map", "stride_map")}
    xla_conditions = _xla_conditions(expected["constraints"], dims_text)
    if instr is not None:
        result = tile_instruction(instr, None).operands[case["operand"]]
        tile = result.map_tiles[0]
    else:
        tile = tile_map(m, None).operands[0].map_tiles[0]
    if "hloidx_differs" in case:
        assert not tile.rectangle
        assert tile.described
        return
    assert tile.formula is not None, tile.reason
    assert tile.rectangle, tile.reason
    ours = tile.formula
    disagreements = 0
    rt_ranges = [tuple(r) for r in expected.get("rt_vars", [])]
    rt_choices = list(product(*[sorted({lo, hi}) for lo, hi in rt_ranges])) or [()]
    both = xla_only = ours_only = 0
    for sizes in _size_grid(extents):
        values = {dim(i): s for i, s in enumerate(sizes)}
        xla_ok = _holds(xla_conditions, values)
        our_ok = ours.conditions.holds(values)
        if xla_ok and our_ok:
            both += 1
            for rt in rt_choices:
                xv = dict(values)
                xv.update({Var(VarKind.RANGE, k): v for k, v in enumerate(rt)})
                ov = dict(values)
                ov.update({Var(VarKind.RUNTIME, k): v for k, v in enumerate(rt)})
                n_results = len(xla_maps["size_map"].results)
                for j in range(n_results):
                    x_axis = _axis(
                        *(
                            int(evaluate(xla_maps[k].results[j], xv))
                            for k in ("offset_map", "size_map", "stride_map")
                        )
                    )
                    t = ours.dims[j]

                    base = replace_vars(
                        t.base,
                        {dim(i): const(0) for i in range(len(sizes))}
                        | {Var(VarKind.RUNTIME, k): const(v) for k, v in enumerate(rt)},
                    )
                    o_axis = _axis(
                        int(evaluate(base, ov)) + int(evaluate(t.adjust, ov)),
                        int(evaluate(t.size, ov)),
                        int(evaluate(t.stride, ov)),
                    )
                    if case.get("known_xla_error"):
                        disagreements += x_axis != o_axis
                    else:
                        assert x_axis == o_axis, (sizes, rt, j, sorted(x_axis)[:8])
        elif xla_ok:
            xla_only += 1
        elif our_ok:
            ours_only += 1
    assert both > 0
    if case.get("known_xla_error"):
        assert disagreements > 0  # XLA's tile is wrong there; hloidx's is the interpreter's
    # hloidx accepts every size XLA accepts, except where XLA's tile is not one rectangle
    # (the split reshape of a reverse) or its runtime offsets vary inside a tile (gather)
    if not case.get("hloidx_stricter"):
        assert xla_only == 0, (xla_only, ours_only)
    else:
        assert xla_only > 0


def test_reverse_of_split_reshape_where_xla_prints_no_constraint() -> None:
    """XLA's tile for a split reshape of a reverse has no constraint, but with 4 rows the
    second tile straddles a row of 6: the interpreter shows it is not one rectangle, and
    hloidx describes it as a loop instead."""
    case = next(c for c in XLA_CASES if c["name"] == "CanPropagateTileThroughSplitReshapeOfReverse")
    instr = _root(case["hlo"])
    result = tile_instruction(instr, (4, 4))
    (o,) = result.operands
    assert not o.rectangle
    assert o.map_tiles[0].witness
    evaluation = reads(instr)
    needed = _needed(evaluation, 0, [(4, 8), (0, 4)])
    rows = {p[1:3] for p in needed}
    assert len(rows) == 4
    assert len({r[0] for r in rows}) == 2
    assert check_against_interpreter(case["hlo"], [(4, 4), (6, 4), (12, 2), (5, 3)]) > 0


@pytest.mark.parametrize(
    "case", [c for c in XLA_CASES if c["expected"] is None], ids=lambda c: c["name"]
)
def test_where_xla_finds_no_tile_hloidx_says_so_or_describes_it(case) -> None:
    m, _extents, instr = _xla_map_and_extents(case)
    result = tile_instruction(instr, None) if instr is not None else tile_map(m, None)
    o = result.operands[case["operand"] if instr is not None else 0]
    doc = tiles_document(result)["operands"][o.index]
    if o.rectangle:
        # more exact than XLA: the interpreter (HLO cases) or the clip (left padding) backs it
        assert "clip" in doc or instr is not None
    else:
        # not one rectangle: the reason, and the read described as loops over held dims
        assert doc["why"]
        assert doc["rectangles"]
        assert all(r["held_dims"] and "count" in r for r in doc["rectangles"])


# ---------------------------------------------------------------------------
# Seeds, the CLI and the JSON document
# ---------------------------------------------------------------------------


def test_seed004_collapse_then_slice_is_a_delinearized_loop() -> None:
    module = hloidx.parse_hlo((TILING_DATA / "seed004.hlo").read_text())
    aligned = hloidx.tile(module, "fusion", (10, 100))
    assert aligned.operands[0].rectangle
    assert aligned.operands[0].map_tiles[0].maps.sizes == (1, 10, 100)
    sliced = hloidx.tile(module, "fusion", (4, 100))
    o = sliced.operands[0]
    assert not o.rectangle
    t = o.map_tiles[0]
    assert t.held == (0,)
    assert t.maps.count == 4
    assert t.maps.sizes == (1, 1, 100)
    assert o.bytes_per_tile() == 4 * 100 * 4
    text = hloidx.format_map(t.maps.offset_map)
    assert "floordiv 10" in text
    assert "mod 10" in text
    assert "witnessed" not in text
    assert t.witness  # a tile was checked not to be one rectangle
    module_text = (TILING_DATA / "seed004.hlo").read_text()
    assert check_against_interpreter(module_text, [(10, 100), (4, 100), (20, 50), (3, 7)]) > 0


def test_seed000_reduce_tile_reads_whole_rows() -> None:
    """Seed 000's example: reducing f32[2,4,8,16] to [4,8] reads (r0, d0, d1, r1); a tile of
    the output reads every r0 and r1."""
    text = (
        "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT s = f32[] add(a, b)\n}\nENTRY e {\n p0 = f32[2,4,8,16] parameter(0)\n"
        " c = f32[] constant(0)\n ROOT r = f32[4,8] reduce(p0, c), dimensions={0,3}, to_apply=add\n}"
    )
    result = tile_instruction(_root(text), (2, 4))
    t = result.operands[0].map_tiles[0]
    assert result.operands[0].rectangle
    assert t.maps.sizes == (2, 2, 4, 16)
    assert check_against_interpreter(text, [(2, 4), (4, 8), (3, 5)]) > 0


def test_json_document_and_cli(tmp_path) -> None:
    path = TILING_DATA / "seed004.hlo"
    runner = CliRunner()
    out = runner.invoke(
        cli, ["tile", str(path), "--instruction", "fusion", "--tile", "4,100", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["schema_version"] == 1
    assert doc["tile"] == [4, 100]
    (o,) = doc["operands"]
    assert o["rectangle"] is False
    assert o["rectangles"][0]["count"] == 4
    assert o["rectangles"][0]["bytes_per_rectangle"] == 400
    sym = json.loads(
        runner.invoke(
            cli, ["tile", str(path), "--instruction", "fusion", "--format", "json"]
        ).output
    )
    assert sym["tile"] == "symbolic"
    # XLA's SymbolicTile gives this disjunction for a collapse of [.., 10] rows (its
    # reshape tests): a tile holds whole rows, or divides one
    assert sym["operands"][0]["constraints"] == "10 mod d0 in [0, 0] || d0 mod 10 in [0, 0]"
    auto = runner.invoke(
        cli, ["tile", str(path), "--instruction", "fusion", "--tile", "auto", "--format", "json"]
    )
    rows = json.loads(auto.output)["candidates"]
    assert rows
    assert rows[0]["exact"]
    per = [r["bytes_per_output_element"] for r in rows if r["exact"]]
    assert per == sorted(per)
    pasted = runner.invoke(
        cli,
        [
            "tile",
            "--map",
            "(d0) -> (d0 floordiv 6, d0 mod 6), domain: d0 in [0, 47]",
            "--tile",
            "4",
        ],
    )
    assert pasted.exit_code == 0
    assert "not one rectangle" in pasted.output


@pytest.mark.parametrize(
    "args",
    [
        ["--tile", "0,4"],
        ["--tile", "4"],
        ["--tile", "200,1"],
        ["--tile", "a,b"],
        ["--instruction", "nope"],
    ],
)
def test_bad_tile_requests_are_one_line_errors(args) -> None:
    path = str(TILING_DATA / "seed004.hlo")
    base = ["tile", path, "--instruction", "fusion"]
    if args[0] == "--instruction":
        base = ["tile", path]
    out = CliRunner().invoke(cli, [*base, *args])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output


def test_undefined_operand_has_no_tile() -> None:
    text = 'HloModule m\nENTRY e {\n p0 = f32[4] parameter(0)\n ROOT r = f32[4] custom-call(p0), custom_call_target="mystery"\n}'
    result = tile_instruction(_root(text), (2,))
    doc = tiles_document(result)["operands"][0]
    assert doc["undefined"]
    assert not doc["rectangle"]
    assert doc["rectangles"] is None


def _corpus_fusions():
    out = []
    for path in sorted(paths.CORPUS.glob("*.hlo")):
        module = hloidx.parse_hlo(path.read_text(), path.name)
        out += [(path.name, i.name) for i in module.entry.instructions if i.opcode == "fusion"]
    return out


def test_every_corpus_fusion_operand_is_described() -> None:
    """Real modules: every operand of every fusion of the corpus gets a tile or a loop of
    rectangles, symbolically and for 16-element tiles; the small ones are checked against
    the interpreter."""
    from hloidx.hlo.fusion import body_of
    from hloidx.hlo.sharing import structure_key

    checked = 0
    modules = {}
    interpreted = set()  # fused bodies of equal structure read the same: interpret one
    for file, name in _corpus_fusions():
        module = modules.get(file) or hloidx.parse_hlo((paths.CORPUS / file).read_text())
        modules[file] = module
        instr = next(i for i in module.entry.instructions if i.name == name)
        extents = tuple(instr.shape.dims) if instr.shape.is_array else None
        if extents is None:
            continue
        sizes = tuple(max(1, min(n, 16)) for n in extents)
        for request in (None, sizes):
            for o in tile_instruction(instr, request).operands:
                assert o.undefined or all(t.described for t in o.map_tiles), (file, name, o.name)
        row = fusion.output_to_input(instr)[0]
        key = (structure_key(body_of(instr)), tuple(o.shape for o in instr.operands))
        if key in interpreted:
            continue
        interpreted.add(key)
        if 0 < prod(extents) <= 2048 and not any(c.runtime_vars for c in row):
            checked += check_against_interpreter(instr, [sizes, extents], max_tiles=16)
    assert checked > 200


def _map_tile_points(m, sizes, tile_index, extents):
    """What the map itself relates to one tile (a pasted map is its own definition)."""
    from hloidx.maps.domain import relation
    from hloidx.maps.indexing_map import IndexingMap, Variable
    from hloidx.maps.interval import Interval

    shifted = m.substitute({dim(i): dim(i) + tile_index[i] * s for i, s in enumerate(sizes)})
    box = tuple(
        Variable(Interval(0, min(s, n - t * s) - 1))
        for s, n, t in zip(sizes, extents, tile_index, strict=True)
    )
    keep = [
        (dim(i) + tile_index[i] * sizes[i], v.bounds)
        for i, v in enumerate(m.dim_vars)
        if v.bounds != Interval(0, extents[i] - 1)
    ]
    tile_map = IndexingMap(shifted.results, box, shifted.range_vars, (), shifted.constraints)
    if keep:
        tile_map = tile_map.add_constraints(keep)
    return {target for _, target in relation(tile_map, 1_000_000)}


@pytest.mark.parametrize("case", [c for c in XLA_CASES if "map" in c], ids=lambda c: c["name"])
def test_xla_map_cases_hold_against_the_maps_relation(case) -> None:
    """Pasted maps (XLA's FromIndexingMap tests, including those where XLA bails out): every
    description hloidx gives reads exactly what the map relates, tile by tile."""
    m = hloidx.parse_map(case["map"])
    extents = tuple(v.bounds.upper + 1 for v in m.dim_vars)
    symbols = prod(v.bounds.upper - v.bounds.lower + 1 for v in m.range_vars) if m.range_vars else 1
    rng = random.Random(7)
    compared = 0
    for sizes in _size_grid(extents, limit=400):
        if prod(sizes) * symbols > 60_000:
            continue
        (o,) = tile_map(m, sizes).operands
        for t in o.map_tiles:
            _SIZES[id(t)] = sizes
        counts = [-(-n // s) for n, s in zip(extents, sizes, strict=True)]
        for _ in range(3):
            index = tuple(rng.randrange(c) for c in counts)
            full = all((i + 1) * s <= n for i, s, n in zip(index, sizes, extents, strict=True))
            needed = _map_tile_points(m, sizes, index, extents)
            big = tuple(10**9 for _ in m.results)
            described = set()
            for t in o.map_tiles:
                described |= _rectangle_points(t, index, [], big)
            described = {p for p in described if all(c >= 0 for c in p)}
            needed = {p for p in needed if all(c >= 0 for c in p)}
            if full:
                assert needed == described, (sizes, index)
            else:
                assert needed <= described, (sizes, index)
            compared += 1
        if compared >= 30:
            break
    assert compared > 0


def test_a_narrowed_dim_under_a_floordiv_is_not_taken_for_a_clip() -> None:
    """``(d0) -> (d0 floordiv 2)`` with ``d0 in [3, 5]``: position 2 reads nothing, though
    its result (1) lies between those of 3 and 5; a clip on the result would say it reads 1."""
    m = hloidx.parse_map("(d0) -> (d0 floordiv 2), domain: d0 in [3, 5]")
    (o,) = tile_map(m, (1,)).operands
    for index in range(6):
        needed = _map_tile_points(m, (1,), (index,), (6,))
        described = set()
        for t in o.map_tiles:
            _SIZES[id(t)] = (1,)
            described |= _rectangle_points(t, (index,), [], (10**9,))
        assert needed == {p for p in described if p[0] >= 0}, index
