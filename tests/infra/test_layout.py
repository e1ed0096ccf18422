"""The layout keeps its promises: dependencies go one way, no import cycles, short modules, and HTTP stays
in the routers. Read from the source with `ast`, so a lazy import inside a function counts too."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """App modules `path` imports, at any depth of the file except `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()
    skipped: set[int] = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skipped.update(id(child) for child in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules}


@cache  # parsing every module takes a while: once per test process, for all the tests reading the graph
def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in APP.rglob("*.py")}
    modules = set(files)
    return {name: _imports(path, modules) - {name} for name, path in files.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if _is_package_of(nxt, node):
                continue  # a module importing its own package's __init__ is not a cycle of the design
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_no_import_cycle() -> None:
    graph = _graph()
    # A package's __init__ re-exporting its modules is fine; cycles through it are not.
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize(
    "layer,forbidden",
    [
        (
            "app.domain",
            (
                "app.services",
                "app.repositories",
                "app.routers",
                "app.providers",
                "app.db",
                "app.web",
                "app.worker",
                "app.adapters",
                "app.main",
                "app.container",
            ),
        ),
        ("app.repositories", ("app.services", "app.routers", "app.web", "app.worker", "app.adapters", "app.main")),
        (
            "app.providers",
            ("app.services", "app.repositories", "app.routers", "app.web", "app.worker", "app.adapters", "app.main"),
        ),
        ("app.services", ("app.routers", "app.web", "app.worker", "app.adapters", "app.main")),
        ("app.schemas", ("app.web", "app.routers", "app.services", "app.worker", "app.adapters")),
        ("app.routers", ("app.worker", "app.adapters")),
    ],
)
def test_dependencies_go_one_way(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = _graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module.startswith(layer)
        for target in targets
        if target.startswith(forbidden)
    )
    assert not wrong, wrong


def test_services_and_domain_take_plain_data() -> None:
    """HTTP types stay in routers, middleware and auth: services and the domain never see a request."""
    offenders = []
    for folder in ("services", "domain", "repositories"):
        for path in (APP / folder).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                offenders += [
                    f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in {"fastapi", "starlette"}
                ]
    assert not offenders, offenders


def test_modules_are_short() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in APP.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_services_are_grouped_by_capability() -> None:
    loose = sorted(p.stem for p in (APP / "services").glob("*.py") if p.stem != "__init__")
    # besides capabilities: the per-process collaborators the container holds (the cached LLM, the pipeline
    # event hub), the readiness report and the projects every capability checks
    assert loose == ["cached_llm", "health", "pipeline_hub", "projects"], loose


COMPOSITION_ROOT = {"__init__", "__main__", "asgi", "container", "main", "wiring"}
ROOT_MODULES = {"app", *(f"app.{name}" for name in COMPOSITION_ROOT)}


def test_only_the_composition_root_is_loose_in_app() -> None:
    """Everything else lives in a wing (core, web, worker, adapters) or a layer package."""
    loose = sorted(p.stem for p in APP.glob("*.py") if p.stem not in COMPOSITION_ROOT)
    assert not loose, loose


def test_adapters_import_the_core_never_the_reverse() -> None:
    """The LightRAG and chat adapters can be removed without touching the core: nothing outside them imports
    them but the composition root that mounts their routes."""
    graph = _graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if not module.startswith("app.adapters") and module not in ROOT_MODULES
        for target in targets
        if target.startswith("app.adapters")
    )
    assert not wrong, wrong


def test_the_core_wing_imports_nothing_of_the_app() -> None:
    graph = _graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module.startswith("app.core")
        for target in targets
        if not target.startswith("app.core")
    )
    assert not wrong, wrong


def _package(module: str) -> str:
    """The capability package or module a module belongs to: app.services.graph.view -> app.services.graph."""
    parts = module.split(".")
    return ".".join(parts[:3])


def test_packages_do_not_import_each_other_both_ways() -> None:
    """A tie in both directions (graph <-> ingest, say) means two capabilities are really one, or one rule
    is in the wrong place."""
    graph = _graph()
    edges = {
        (_package(m), _package(t))
        for m, targets in graph.items()
        for t in targets
        if _package(m) != _package(t) and not _is_package_of(_package(t), m)
    }
    both = sorted({tuple(sorted(edge)) for edge in edges if edge[::-1] in edges})
    assert not both, both
