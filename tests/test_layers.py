"""The import graph of the package has no cycles: every module imports only modules below it.

Deferred imports (inside functions) count too: they are dependencies all the same, only paid
later. What runs on import is checked again with the packages' `__init__` modules, which
importing a submodule runs first. Imports under `TYPE_CHECKING` do not count: they exist for
the type checker alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clawspec"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph(*, deferred: bool) -> dict[str, set[str]]:
    """Module -> the package modules it imports. `deferred`: imports inside functions too;
    else only what runs when the module is imported, plus the packages whose `__init__` that
    runs (importing `a.b.c` runs `a.b` first)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)
        }
        nodes = ast.walk(tree) if deferred else _module_level(tree)
        found: set[str] = set()
        for node in nodes:
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    found.add(target if target in modules else node.module)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        if not deferred:  # a module's own packages are running already when it is imported
            own = set(_parents(name)) | {name}
            found |= {parent for target in found for parent in _parents(target)} - own
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """The statements that run on import: the module's body, into `if`/`try` blocks."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If | ast.Try):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(2, len(parts))]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle() -> None:
    """Layers: no module depends on one that depends on it, deferred imports included."""
    graph = _graph(deferred=True)
    assert len(graph) > 100  # the whole package was read
    assert _cycles(graph) == []


def test_no_module_can_fail_by_being_imported_first() -> None:
    """What runs on import, package `__init__`s included, has no cycle either: one would make
    an import fail whenever the other module of the cycle happened not to be loaded yet."""
    assert _cycles(_graph(deferred=False)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_assertions_read_evidence_not_the_readers() -> None:
    """Assertions ask for typed evidence (`clawspec.evidence`): no assertion module imports the
    gateway's or the traces' code, deferred imports included."""
    graph = _graph(deferred=True)
    readers = ("clawspec.gateway", "clawspec.traces")
    found = {
        module: sorted(target for target in targets if target.startswith(readers))
        for module, targets in graph.items()
        if module.startswith("clawspec.assertions")
    }
    assert {module: targets for module, targets in found.items() if targets} == {}


def _package_of(module: str) -> str:
    """The package a module belongs to, one level under `clawspec` (`clawspec.a.b` →
    `clawspec.a`); a top-level module is its own package."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        own = _package_of(module)
        packages.setdefault(own, set()).update(
            _package_of(target) for target in targets if _package_of(target) != own
        )
    return packages


def test_packages_import_each_other_one_way() -> None:
    """Layers of packages: no package depends on one that depends on it, deferred imports
    included. A package cycle lets a change anywhere in it reach everything in it."""
    modules = _graph(deferred=True)
    packages = _package_graph(modules)
    assert {"clawspec.assertions", "clawspec.evidence", "clawspec.reports"} <= set(packages)
    knots = _cycles(packages)
    knotted = {package for knot in knots for package in knot}
    imports = sorted(
        f"{module} -> {target}"
        for module, targets in modules.items()
        for target in targets
        if _package_of(module) != _package_of(target)
        and {_package_of(module), _package_of(target)} <= knotted
    )
    assert knots == [], "imports between the packages of a cycle:\n" + "\n".join(imports)


def test_the_package_graph_joins_modules_by_their_package() -> None:
    graph = {
        "clawspec.a.x": {"clawspec.b.y"},
        "clawspec.b.y": {"clawspec.c"},
        "clawspec.c": {"clawspec.a.z"},
        "clawspec.a.z": set(),
    }
    assert _cycles(_package_graph(graph)) == [["clawspec.a", "clawspec.b", "clawspec.c"]]


# The run's packages, top to bottom: each may import only those below it. Choosing what runs
# (`selection`) and printing what would run (`dry_run`) are not running: the runner asks the
# selection, the dry run reads the runner's plans; the reports hold the run's kept results and
# the evidence each scenario's report shows.
RUN_LAYERS = [
    "clawspec.commands",
    "clawspec.api",
    "clawspec.dry_run",
    "clawspec.runner",
    "clawspec.selection",
    "clawspec.reports",
    "clawspec.evidence",
]


def _upward(modules: dict[str, set[str]]) -> list[str]:
    """The imports from a package of `RUN_LAYERS` to one above it."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in modules.items()
        if _package_of(module) in RUN_LAYERS
        for target in targets
        if _package_of(target) in RUN_LAYERS[: RUN_LAYERS.index(_package_of(module))]
    )


def test_the_run_packages_import_downward() -> None:
    modules = _graph(deferred=True)
    assert set(RUN_LAYERS) <= set(_package_graph(modules))
    assert _upward(modules) == []


def test_an_upward_import_between_run_packages_is_found() -> None:
    modules = {"clawspec.selection.x": {"clawspec.runner.y"}, "clawspec.runner.y": set()}
    assert _upward(modules) == ["clawspec.selection.x -> clawspec.runner.y"]
