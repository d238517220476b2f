"""The folders say where code runs: the rules of the package's layout, read from its imports.

- ``lineage/`` is the ground floor, standard library only: nothing under it imports ``job/``,
  the Airflow side (hooks, operators, plugins, OpenLineage, the CLI) or a third-party package;
  ``lineage/sql/`` alone imports sqlglot.
- ``job/`` runs inside spark-submit: the standard library, pyspark and the ground floor.
- What the driver ships (``job/`` and ``lineage/`` without ``lineage/sql/``) imports, even
  lazily, no sqlglot, no Airflow and no OpenLineage, and imports with none of them installed.
- The package's import graph has no circle (imports inside functions count too).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_lineage_provider.hooks.spark_lineage import job_modules, job_package_zip
from tests.helpers import ROOT

PACKAGE = ROOT / "airflow_lineage_provider"
NAME = "airflow_lineage_provider"
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, *, lazy: bool = True) -> set[str]:
    """Every module ``path`` imports (absolute names); ``lazy=False``: only those at module level."""
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if lazy else iter(tree.body)
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # ``from package import module`` imports the module too
            found |= {f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MODULES}
    return found


def top(module: str) -> str:
    return module.split(".")[0]


def under(module: str, room: str) -> bool:
    return module == f"{NAME}.{room}" or module.startswith(f"{NAME}.{room}.")


@pytest.mark.parametrize("module", [m for m in MODULES if under(m, "lineage")])
def test_the_ground_floor_stands_on_nothing_above_it(module):
    found = imports(MODULES[module])
    ours = {m for m in found if top(m) == NAME}
    assert all(under(m, "lineage") for m in ours), f"{module} imports {sorted(ours)}"
    foreign = {top(m) for m in found} - STDLIB - {NAME}
    if under(module, "lineage.sql"):
        assert foreign <= {"sqlglot"}, f"{module} imports {sorted(foreign)}"
    else:
        assert not foreign, f"{module} imports {sorted(foreign)}: lineage/ is standard library only"


def test_only_the_static_extractor_imports_sqlglot():
    importers = {m for m, path in MODULES.items() if any(top(i) == "sqlglot" for i in imports(path))}
    assert importers and all(under(m, "lineage.sql") for m in importers), sorted(importers)


@pytest.mark.parametrize("module", [m for m in MODULES if under(m, "job")])
def test_the_job_runs_inside_spark(module):
    found = imports(MODULES[module])
    ours = {m for m in found if top(m) == NAME}
    assert all(under(m, "job") or under(m, "lineage") for m in ours), f"{module} imports {sorted(ours)}"
    assert not any(under(m, "lineage.sql") for m in ours), module
    assert {top(m) for m in found} - STDLIB - {NAME} <= {"pyspark"}, module


def test_the_driver_ships_job_and_lineage_without_the_static_extractor():
    shipped = job_modules()
    expected = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
                if p.suffix in (".py", ".json") and p.relative_to(PACKAGE).parts[0] in ("job", "lineage")
                and p.relative_to(PACKAGE).parts[:2] != ("lineage", "sql")}
    assert set(shipped) == expected | {"__init__.py"}
    for relative in shipped:
        if relative.endswith(".py"):
            found = imports(PACKAGE / relative)
            assert not {top(m) for m in found} & {"sqlglot", "airflow", "openlineage"}, relative
            assert not any(under(m, "lineage.sql") for m in found), relative


def test_every_shipped_module_imports_from_the_zip_alone(tmp_path):
    """-S: no site-packages, so neither this editable install nor Airflow nor sqlglot can be found."""
    archive = job_package_zip(str(tmp_path))
    names = [module_name(PACKAGE / r) for r in job_modules() if r.endswith(".py")]
    code = ("import importlib, sys; sys.path.insert(0, sys.argv[1])\n"
            "for name in sys.argv[2:]:\n"
            "    module = importlib.import_module(name)\n"
            "    assert module.__file__.startswith(sys.argv[1]), module.__file__\n"
            "print(len(sys.argv) - 2)")
    out = subprocess.run([sys.executable, "-S", "-c", code, archive, *names], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(len(names))


def test_the_import_graph_has_no_circle():
    graph = {m: {i for i in imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}
    # A module's package __init__ runs first: an import of a.b.c is an import of a.b too.
    for m, targets in graph.items():
        for t in list(targets):
            parent = t.rsplit(".", 1)[0]
            while parent in MODULES and parent != NAME:
                if parent != m and not m.startswith(parent + "."):
                    targets.add(parent)
                parent = parent.rsplit(".", 1)[0]
    visiting: list[str] = []
    done: set[str] = set()

    def visit(m: str) -> None:
        if m in done:
            return
        assert m not in visiting, "circle: " + " -> ".join(visiting[visiting.index(m):] + [m])
        visiting.append(m)
        for t in sorted(graph[m]):
            visit(t)
        visiting.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)


def test_the_top_level_holds_only_its_four_modules_and_folders():
    """cli.py, conf.py (options), runs.py (the one XCom reader), get_provider_info.py: everything else has
    a room that says where it runs."""
    top_level = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py"}
    assert top_level == {"cli.py", "conf.py", "runs.py", "get_provider_info.py"}, sorted(top_level)


def test_only_runs_reads_lineage_xcoms():
    readers = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        if "airflow.models.xcom" in imports(path) or "XComModel" in names:
            readers.add(module)
    assert readers == {f"{NAME}.runs"}, sorted(readers)


def test_no_module_but_spark_provider_names_a_private_name_of_the_spark_provider():
    """A provider release that renames one is found by tests/unit/hooks/test_spark_provider.py, which
    checks the names this module declares: so they must all be declared, and read, there. (``job/`` and
    ``lineage/`` import no Airflow at all: their own ``_conf`` is not the provider's.)"""
    from airflow_lineage_provider.hooks.spark_provider import RELIED_ON

    private = {name for names in RELIED_ON.values() for name in names}
    home = f"{NAME}.hooks.spark_provider"
    found = {}
    for module, path in MODULES.items():
        if module == home or under(module, "job") or under(module, "lineage"):
            continue
        tree = ast.parse(path.read_text())
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} & private
        if used:
            found[module] = sorted(used)
    assert not found, found
