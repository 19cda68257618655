"""The storage boundary: only ``newsspider/storage/`` imports SQLAlchemy.

Commands, pipelines, middlewares and the nightly run get an engine from
``storage.engine_from_settings`` and call storage functions; a query built anywhere
else would be a second place to change when the schema changes. Imports under
``if TYPE_CHECKING:`` count too: a type from SQLAlchemy outside storage is a sign the
boundary is leaking (``storage`` re-exports ``Engine`` and ``Session`` for type hints).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "newsspider"
STORAGE = PACKAGE / "storage"


def sqlalchemy_imports(tree: ast.Module) -> list[int]:
    """Line numbers of every ``import sqlalchemy...``/``from sqlalchemy... import``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(n == "sqlalchemy" or n.startswith("sqlalchemy.") for n in names):
            lines.append(node.lineno)
    return lines


def test_sqlalchemy_imports_finds_every_form() -> None:
    source = (
        "import sqlalchemy\nfrom sqlalchemy.orm import Session\nimport os\n"
        "def f():\n    import sqlalchemy.exc as e\nfrom .sqlalchemy import x\n"
        "from sqlalchemyx import y\n"
    )
    assert sqlalchemy_imports(ast.parse(source)) == [1, 2, 5]


def test_only_storage_imports_sqlalchemy() -> None:
    outside = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if STORAGE not in path.parents
        for line in sqlalchemy_imports(ast.parse(path.read_text("utf-8"), str(path)))
    ]
    assert not outside, "sqlalchemy imported outside newsspider/storage: " + ", ".join(outside)


def test_storage_does_import_it() -> None:
    """The walk sees storage's own imports (the test above is not vacuous)."""
    assert sqlalchemy_imports(ast.parse((STORAGE / "engine.py").read_text("utf-8")))
