"""The package layout: import directions between layers, module size, a public API that works
twice, and ``python -m hloidx``. The allowed directions are the table in CONTRIBUTING.md."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import paths
import pytest

import hloidx

PACKAGE = paths.ROOT / "hloidx"
MAX_MODULE_LINES = 600

#: layer -> the layers it may import (besides itself)
# protos/: modules protoc generated from XLA's schemas; they import only each other
BASE = {"source", "errors", "caches", "grammar_files", "version", "protos"}
ALLOWED: dict[str, set[str]] = {
    "base": {"base"},
    "maps": {"base"},
    "hlo": {"maps", "base"},
    "stablehlo": {"hlo", "maps", "base"},
    "gpu": {"hlo", "maps", "base"},
    "tiling": {"hlo", "maps", "base"},
    "pictures": {"hlo", "maps", "base"},
    "check": {"stablehlo", "hlo", "maps", "base"},
    "perf": {"gpu", "tiling", "hlo", "maps", "base"},
    # measured profiles -> times per (module, program, instruction); knows nothing of estimates
    "profiles": {"hlo", "base"},
    # a module before optimization grouped as XLA:GPU would group it (issue 47)
    "fusion_sim": {"perf", "gpu", "tiling", "hlo", "maps", "base"},
    # the renderers every front end shares: text, JSON documents, HTML (Rich, never Click)
    "render": {"check", "perf", "gpu", "tiling", "stablehlo", "pictures", "hlo", "maps", "base"},
    # Click wiring and options only; its text comes from render/
    "cli": {
        "cli",
        "profiles",
        "fusion_sim",
        "render",
        "lsp",
        "model_explorer",
        "check",
        "perf",
        "gpu",
        "tiling",
        "stablehlo",
        "pictures",
        "hlo",
        "maps",
        "base",
    },
    # the language server (hloidx lsp): the library's answers over LSP; never the CLI
    "lsp": {"render", "perf", "gpu", "tiling", "stablehlo", "hlo", "maps", "base"},
    # Model Explorer's graphs and node data (hloidx.model_explorer; its main.py is the extension)
    "model_explorer": {"perf", "gpu", "tiling", "stablehlo", "hlo", "maps", "base"},
    # the display layer: the public result objects; it reaches the text renderers lazily only
    # (test_layout_display_code_stays_above_the_analyses)
    "notebook": {
        "render",
        "profiles",
        "perf",
        "check",
        "gpu",
        "tiling",
        "stablehlo",
        "pictures",
        "hlo",
        "maps",
        "base",
    },
    "api": {
        "notebook",
        "profiles",
        "fusion_sim",
        "render",
        "cli",
        "check",
        "perf",
        "gpu",
        "tiling",
        "stablehlo",
        "pictures",
        "hlo",
        "maps",
        "base",
    },
}
GUI_PACKAGES = {"click", "rich"}
#: the layers that may import each GUI package (Rich styles the shared text; Click is the CLI's)
GUI_LAYERS = {"click": {"cli"}, "rich": {"cli", "render"}}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _layer(module: str) -> str:
    """``hloidx.maps.expr`` -> ``maps``; ``hloidx.errors`` -> ``base``; ``hloidx`` -> ``api``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__", "__main__"):
        return "api"
    if parts[1] in BASE:
        return "base"
    return parts[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """Every module imported anywhere in the file (lazy imports inside functions included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from . import fusion` imports a submodule: judge that submodule too
            for alias in node.names:
                found.append((node.lineno, f"{target}.{alias.name}"))
    return found


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (
        PACKAGE.parent / rel / "__init__.py"
    ).is_file()


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layout_imports_only_lower_layers(path: Path) -> None:
    here = _layer(_module_name(path))
    allowed = ALLOWED[here] | {here}
    for line, target in _imports(path):
        top = target.split(".")[0]
        if top in GUI_PACKAGES:
            assert here in GUI_LAYERS[top], f"{path.name}:{line}: {here} must not import {target}"
        if top != "hloidx" or not _is_module(target):
            continue
        assert _layer(target) in allowed, f"{path.name}:{line}: {here} must not import {target}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layout_module_has_one_job(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path} has {lines} lines: split it along its seams"


def _cli_importers(path: Path, text: str | None = None) -> list[str]:
    """Imports of ``hloidx.cli`` from outside it (lazy ones inside functions included); only
    ``hloidx/__main__.py`` may import the command line."""
    name = _module_name(path)
    if name == "hloidx.__main__" or name == "hloidx.cli" or name.startswith("hloidx.cli."):
        return []
    return [
        f"{path.relative_to(PACKAGE)}:{line} imports {target}"
        for line, target in _imports(path, text)
        if target == "hloidx.cli" or target.startswith("hloidx.cli.")
    ]


def test_layout_only_main_imports_the_command_line() -> None:
    """``cli/`` is Click wiring and options: the notebook, the renderers, the language server
    and the public API reach text through ``render/``, never through ``cli/``."""
    found = [problem for path in _modules() for problem in _cli_importers(path)]
    assert not found, found
    # the rule can fail: an eager and a lazy import of cli/ from the notebook are caught, and
    # `python -m hloidx`'s own import is allowed
    probe = PACKAGE / "notebook" / "display.py"
    assert _cli_importers(probe, "from ..cli.main import cli\n")
    assert _cli_importers(probe, "def f():\n    from ..cli import options\n")
    assert _cli_importers(PACKAGE / "render" / "lines.py", "import hloidx.cli.main\n")
    assert not _cli_importers(PACKAGE / "__main__.py", "from .cli import main\n")


def test_layout_every_package_belongs_to_a_layer() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages <= set(ALLOWED) | BASE, packages - set(ALLOWED) - BASE


def test_layout_checker_sees_a_violation(tmp_path: Path) -> None:
    # The checker itself must be able to fail: a maps module importing the CLI is caught.
    bad = PACKAGE / "maps" / "expr.py"
    text = "from ..cli import main\n"
    tree_imports = [
        t for _, t in _imports_from_text(text, bad) if t.startswith("hloidx") and _is_module(t)
    ]
    assert tree_imports
    assert _layer(tree_imports[0]) not in ALLOWED["maps"]


def _imports_from_text(text: str, as_path: Path) -> list[tuple[int, str]]:
    fake = as_path.with_name("_layout_probe.py")
    fake.write_text(text, encoding="utf-8")
    try:
        return _imports(fake)
    finally:
        fake.unlink()


# ---------------------------------------------------------------------------
# The public API
# ---------------------------------------------------------------------------

_MAP = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
_HLO = """HloModule m
ENTRY e {
  p0 = f32[4,6] parameter(0)
  ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
}
"""


_STABLEHLO = """module @m {
  func.func public @main(%arg0: tensor<4x6xf32>) -> tensor<6x4xf32> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    return %0 : tensor<6x4xf32>
  }
}
"""


def _from_jax() -> object:
    try:
        import jax.numpy as jnp
    except ImportError:  # jax is an optional extra: the call must say so, as an HloidxError
        with pytest.raises(hloidx.errors.HloidxError, match="needs jax"):
            hloidx.from_jax(lambda x: x, None)
        return None
    return hloidx.from_jax(lambda x: x.T, jnp.ones((4, 6)))


_FUSION = """HloModule m
f {
  p = f32[64] parameter(0)
  ROOT n = f32[64] negate(p)
}
ENTRY e {
  x = f32[64] parameter(0)
  ROOT fusion = f32[64] fusion(x), kind=kLoop, calls=f
}
"""


def _cost() -> object:
    if not _is_module("hloidx.perf"):  # the cost model's branch: the call must say so
        with pytest.raises(hloidx.errors.HloidxError, match="cost model"):
            hloidx.cost(_FUSION)
        return None
    return hloidx.cost(_FUSION)


def _call(name: str) -> object:
    m = hloidx.parse_map(_MAP)
    calls = {
        "parse_map": lambda: hloidx.parse_map(_MAP),
        "format_map": lambda: hloidx.format_map(m),
        "simplify": lambda: hloidx.simplify(m),
        "simplify_with_rules": lambda: hloidx.simplify_with_rules(m),
        "verify": lambda: hloidx.verify(m, hloidx.simplify(m)),
        "parse_hlo": lambda: hloidx.parse_hlo(_HLO),
        "analyze": lambda: hloidx.analyze(hloidx.parse_hlo(_HLO)),
        "clear_caches": hloidx.clear_caches,
        "register_custom_call": lambda: hloidx.register_custom_call(
            "layout$test", lambda instr: instr
        ),
        "parse_stablehlo": lambda: hloidx.parse_stablehlo(_STABLEHLO),
        "from_jax": _from_jax,
        "tile": lambda: hloidx.tile(hloidx.parse_hlo(_HLO), "t", (2, 4)),
        "show": lambda: hloidx.show(hloidx.parse_hlo(_HLO), "t"),
        "threads": lambda: hloidx.threads(_FUSION, "fusion"),
        "coalescing": lambda: hloidx.coalescing(_FUSION),
        "cost": _cost,
    }
    return calls[name]()


def _public_functions() -> list[str]:
    return [n for n in hloidx.__all__ if callable(getattr(hloidx, n, None))]


@pytest.mark.parametrize("name", _public_functions())
def test_public_function_works_twice(name: str) -> None:
    first = _call(name)
    second = _call(name)
    assert type(first) is type(second)
    assert callable(getattr(hloidx, name))


def test_no_public_function_shares_a_submodule_name() -> None:
    submodules = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py"} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    assert not set(_public_functions()) & submodules


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hloidx", "simplify", _MAP],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "(d0, d1) -> (d0, d1)" in done.stdout


# ---------------------------------------------------------------------------
# No import circles
# ---------------------------------------------------------------------------


def _import_graph() -> dict[str, set[str]]:
    """module -> the hloidx modules it imports (anywhere in the file, relative or absolute).

    ``from pkg import name`` imports the submodule ``pkg.name`` when there is one, else ``pkg``
    itself (a package's ``__init__``); ``import a.b`` imports ``a.b``.
    """
    graph: dict[str, set[str]] = {}
    for path in _modules():
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    submodule = f"{target}.{alias.name}"
                    targets.add(submodule if _is_module(submodule) else target)
        graph[name] = {t for t in targets if t.split(".")[0] == "hloidx" and _is_module(t)}
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[tuple[frozenset[str], list[str]]]:
    """The strongly connected components of more than one module (Tarjan), each with a path
    around one circle through its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [(frozenset(c), _circle(graph, c)) for c in components]


def _circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """One path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return sorted(component)


def test_layout_has_no_import_circles() -> None:
    found = [circle for component, circle in _cycles(_import_graph())]
    assert not found, "import circles: " + "; ".join(" -> ".join(c) for c in found)


def test_layout_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [(frozenset("abc"), ["a", "b", "c", "a"])]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------------------
# The display layer sits above the analyses
# ---------------------------------------------------------------------------

#: the layers of analyses: they never import pictures, HTML, notebook or DataFrame code
ANALYSES = {"base", "maps", "hlo", "stablehlo", "gpu", "tiling", "perf", "cost", "check"}
DISPLAY_MODULES = {
    "html",
    "xml",
    "IPython",
    "pandas",
    "hloidx.pictures",
    "hloidx.render",
    "hloidx.notebook",
}


def _module_level_imports(path: Path, text: str | None = None) -> set[str]:
    """The modules imported when ``path`` is imported (not those imported inside a function)."""
    lazy: set[int] = set()
    tree = ast.parse(path.read_text(encoding="utf-8") if text is None else text)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lazy.update(id(n) for n in ast.walk(node) if n is not node)
    eager = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)}
    eager -= {n.lineno for n in ast.walk(tree) if id(n) in lazy and hasattr(n, "lineno")}
    return {t for line, t in _imports(path, text) if line in eager}


def _display_violations(path: Path, text: str | None = None) -> list[str]:
    here = _layer(_module_name(path))
    found = []
    for line, target in _imports(path, text):
        if here in ANALYSES and any(
            target == d or target.startswith(d + ".") for d in DISPLAY_MODULES
        ):
            found.append(f"{path.name}:{line}: {here} imports display code {target}")
        if here != "api" and here != "notebook" and target.startswith("hloidx.notebook"):
            found.append(f"{path.name}:{line}: {here} imports the display layer {target}")
    if here == "notebook":
        for target in _module_level_imports(path, text):
            if target.startswith("hloidx.render") or target.split(".")[0] in GUI_PACKAGES:
                found.append(f"{path.name}: the display layer imports {target} eagerly")
    return found


def test_layout_display_code_stays_above_the_analyses() -> None:
    """``hlo/``, ``gpu/``, ``tiling/``, ``perf/`` (every analysis) import no pictures, HTML,
    notebook, renderer or DataFrame code; nothing below the public API imports the display
    layer (no circle); the display layer reaches the text renderers (``render/``), and so
    Rich, only inside functions, when text is asked for."""
    problems = [p for path in _modules() for p in _display_violations(path)]
    assert not problems, problems
    # the rule can fail: an analysis drawing a picture, and an eager CLI import, are caught
    probe = PACKAGE / "hlo" / "analysis.py"
    assert _display_violations(probe, "from ..pictures.svg import svg\nimport html\n")
    probe = PACKAGE / "notebook" / "display.py"
    assert _display_violations(probe, "from ..render.plain import rich_text\n")
    assert not _display_violations(probe, "def f():\n    from ..render.plain import rich_text\n")
    assert _display_violations(PACKAGE / "perf" / "report.py", "from ..render import lines\n")
