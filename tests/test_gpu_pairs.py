"""Every GPU form in tests/data/gpu/pairs reads what its plain form reads.

Each ``NAME.gpu.hlo`` is what XLA:GPU writes for ``NAME.plain.hlo`` (a cuBLAS/cuDNN
custom-call for a dot or convolution, an asynchronous start/done pair for a collective or a
copy). For every parameter, the maps from the root ``r`` to it must be the same relation with
the same ``exact``, through each way a user reads them: the library's ``chain_maps``, and
``hloidx maps FILE --from r --to P`` as text and as JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import hloidx
from hloidx.cli.main import cli
from hloidx.hlo.chains import chain_maps
from hloidx.maps.domain import relation

PAIRS = Path(__file__).parent / "data" / "gpu" / "pairs"
NAMES = sorted(p.name.removesuffix(".gpu.hlo") for p in PAIRS.glob("*.gpu.hlo"))

#: what must be among the pairs (the issue's five custom-call families, the four async
#: collectives, copy-start/done)
REQUIRED = {
    "gemm_simple",
    "cublaslt_matmul_bias",
    "conv_forward",
    "conv_bias_relu",
    "conv_backward_input_even_padding",
    "conv_backward_filter_strided",
    "all_gather",
    "all_reduce",
    "collective_permute",
    "all_to_all",
    "reduce_scatter",
    "copy",
}


def _parameters(path: Path) -> list[str]:
    return [i.name for i in hloidx.parse_hlo(path.read_text()).entry.parameters]


def _library(path: Path, parameter: str) -> tuple[frozenset, bool]:
    module = hloidx.parse_hlo(path.read_text())
    _, _, reached = chain_maps(module, "r", parameter)
    assert not reached.unknown, reached.unknown
    root = module.entry.root.shape.dims
    pairs: set = set()
    for t in reached.maps:
        box = [(v.bounds.lower, v.bounds.upper) for v in t.map.dim_vars]
        assert len(box) == len(root), t.map
        assert all(lo >= 0 and hi < n for (lo, hi), n in zip(box, root, strict=False)), t.map
        pairs |= relation(t.map)
    return frozenset(pairs), all(t.exact for t in reached.maps)


def _relation_of_texts(texts: list[str]) -> frozenset:
    pairs: set = set()
    for text in texts:
        pairs |= relation(hloidx.parse_map(text))
    return frozenset(pairs)


def _cli_json(path: Path, parameter: str) -> tuple[frozenset, bool]:
    run = CliRunner().invoke(
        cli, ["maps", str(path), "--from", "r", "--to", parameter, "--format", "json"]
    )
    assert run.exit_code == 0, run.output
    doc = json.loads(run.output)
    return _relation_of_texts(doc["maps"]), doc["exact"]


def _cli_text(path: Path, parameter: str) -> tuple[frozenset, bool]:
    run = CliRunner().invoke(cli, ["maps", str(path), "--from", "r", "--to", parameter])
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(f"r reads {parameter}"))
    maps = []
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or line.lstrip().startswith(("utilization", "path")):
            break
        maps.append(line.strip())
    verdicts = ("exact", "over-approximation", "unknown")
    verdict = next(line.strip() for line in lines[start + 1 :] if line.strip() in verdicts)
    return _relation_of_texts(maps), verdict == "exact"


def test_the_pairs_cover_every_family() -> None:
    assert set(NAMES) >= REQUIRED
    for name in NAMES:
        assert (PAIRS / f"{name}.plain.hlo").exists(), name


@pytest.mark.parametrize("name", NAMES)
def test_gpu_form_reads_what_the_plain_form_reads(name: str) -> None:
    gpu, plain = PAIRS / f"{name}.gpu.hlo", PAIRS / f"{name}.plain.hlo"
    parameters = _parameters(plain)
    assert parameters == _parameters(gpu)
    for parameter in parameters:
        expected = _library(plain, parameter)
        assert expected[0], f"{name}: the plain form reads nothing of {parameter}"
        for read in (_library, _cli_json, _cli_text):
            assert read(gpu, parameter) == expected, (name, parameter, read.__name__)


def test_the_text_reader_sees_every_printed_map() -> None:
    # guards the text scraper above: a two-map answer must come back as two maps
    path = PAIRS / "conv_bias_relu.plain.hlo"
    pairs, exact = _cli_text(path, "x")
    assert (pairs, exact) == _cli_json(path, "x")
    assert re.search(r"\d", str(sorted(pairs)[0]))
