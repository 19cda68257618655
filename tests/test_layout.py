"""The package's shape, checked on its source: what a reader relies on when finding their way.

- The import graph of ``newsspider/`` has no cycles, counting only the imports that run
  (module level, not under ``if TYPE_CHECKING:``), so the layers read bottom-up:
  extraction at the bottom, storage beside it, pipelines and commands on top.
- No module imports another ``newsspider`` module inside a function: such an import is
  how a cycle is hidden, and it hides the dependency from a reader of the module head.
- ``settings.py`` is the one home of every default: components read a setting without a
  literal fallback, and every setting they read is declared there (or is Scrapy's own).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.settings import default_settings

import newsspider.settings as project_settings

PACKAGE = Path(__file__).resolve().parent.parent / "newsspider"
SETTINGS_GETTERS = {"get", "getint", "getfloat", "getbool", "getlist", "getdict", "getwithbase"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, tuple[Path, ast.Module]]:
    return {
        module_name(path): (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


MODULES = modules()


def resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` names (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports a module runs when it is imported: its top level, try/if bodies included."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not is_type_checking(node):
            yield from runtime_imports(node.body)
            yield from runtime_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from runtime_imports(block)


def targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> Iterator[str]:
    """The ``newsspider`` modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = resolve(node, importer, is_package)
        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
    for name in names:
        if name in MODULES:
            yield name


def import_graph() -> dict[str, set[str]]:
    """module -> modules it imports at run time, with the packages a submodule import runs.

    Importing ``a.b.c`` first runs ``a/__init__`` and ``a/b/__init__``; those edges
    count, except towards the importer's own ancestors (a submodule importing from its
    package's ``__init__`` while that package is being initialised is the normal shape).
    """
    graph: dict[str, set[str]] = {}
    for name, (path, tree) in MODULES.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for node in runtime_imports(tree.body):
            for target in targets(node, name, is_package):
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    step = ".".join(parts[:i])
                    if step in MODULES and step not in ancestors and step != name:
                        edges.add(step)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_import_graph_has_no_cycles() -> None:
    graph = import_graph()
    assert graph["newsspider.pipelines"], "the graph sees the package's imports"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def function_level_imports() -> Iterator[str]:
    for name, (path, tree) in MODULES.items():
        is_package = path.name == "__init__.py"
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import | ast.ImportFrom) and (
                    any(targets(node, name, is_package))
                    or (isinstance(node, ast.ImportFrom) and node.level)
                ):
                    yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno} in {func.name}()"


def test_no_project_imports_inside_functions() -> None:
    found = list(function_level_imports())
    assert not found, "imports of newsspider modules inside functions:\n" + "\n".join(found)


def settings_reads() -> Iterator[tuple[str, int, str, bool]]:
    """(file, line, setting name, has a fallback) for every ``<settings>.getX("NAME", ...)``.

    A getter called with an upper-case string constant is taken as a settings read
    (Scrapy's setting names are upper case; ``os.environ`` is the one other mapping so
    read here).
    """
    for _name, (path, tree) in MODULES.items():
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in SETTINGS_GETTERS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value.isupper()
            ):
                continue
            if "environ" in ast.unparse(node.func.value):  # os.environ.get("X"): not a setting
                continue
            has_fallback = len(node.args) > 1 or any(k.arg == "default" for k in node.keywords)
            yield str(path.relative_to(PACKAGE.parent)), node.lineno, node.args[0].value, has_fallback


READS = list(settings_reads())


def test_settings_reads_are_found() -> None:
    assert any(name == "DATABASE_URL" for _, _, name, _ in READS)


@pytest.mark.parametrize(
    ("where", "name"), [(f"{f}:{line}", name) for f, line, name, fallback in READS if fallback]
)
def test_no_literal_fallback_for_a_setting(where: str, name: str) -> None:
    pytest.fail(f"{where} reads {name} with a fallback: its default belongs in settings.py")


def test_every_setting_read_is_declared() -> None:
    declared = {n for n in dir(project_settings) if n.isupper()} | {
        n for n in dir(default_settings) if n.isupper()
    }
    missing = sorted({f"{name} ({f}:{line})" for f, line, name, _ in READS if name not in declared})
    assert not missing, "settings read but declared nowhere: " + ", ".join(missing)
