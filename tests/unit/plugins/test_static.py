"""The page's committed bundle: shipped in the package, self-contained, and built from its sources."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from airflow_lineage_provider.plugins.app import STATIC_DIR
from tests.helpers import ROOT

UI = STATIC_DIR.parent / "ui"
ASSETS = ("column-lineage.js", "column-lineage.css")


def test_bundle_is_in_the_package_and_small():
    for name in ASSETS:
        assert (STATIC_DIR / name).stat().st_size > 1000
    assert (STATIC_DIR / "column-lineage.js").stat().st_size < 800_000  # minified Cytoscape + dagre + the page


def test_bundle_loads_nothing_from_elsewhere_and_writes_no_html():
    for name in ASSETS:
        text = (STATIC_DIR / name).read_text()
        assert "http://" not in text and "https://" not in text, name  # no CDN: Airflow often runs offline
    js = (STATIC_DIR / "column-lineage.js").read_text()
    assert "innerHTML" not in js and "outerHTML" not in js and "insertAdjacentHTML" not in js


def test_package_data_ships_the_bundle():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"plugins/static/*"' in pyproject


def test_lock_file_pins_the_graph_libraries():
    import json

    lock = json.loads((UI / "package-lock.json").read_text())
    packages = lock["packages"]
    for name in ("cytoscape", "@dagrejs/dagre", "esbuild"):
        assert packages[f"node_modules/{name}"]["version"] == lock["packages"][""].get(
            "dependencies", {}).get(name, lock["packages"][""].get("devDependencies", {}).get(name))


@pytest.mark.skipif(not (UI / "node_modules").is_dir() or not shutil.which("node"),
                    reason="needs `npm ci` in airflow_lineage_provider/plugins/ui")
def test_committed_bundle_is_built_from_the_sources(tmp_path):
    subprocess.run(["node", "build.mjs"], cwd=UI, env={**os.environ, "OUT_DIR": str(tmp_path)}, check=True,
                   capture_output=True)
    for name in ASSETS:
        assert (tmp_path / name).read_bytes() == (STATIC_DIR / name).read_bytes(), \
            f"{name} is stale: run `npm run build` in {UI}"


@pytest.mark.skipif(not (UI / "node_modules").is_dir() or not shutil.which("node"),
                    reason="needs `npm ci` in airflow_lineage_provider/plugins/ui")
def test_the_pages_logic_passes_its_node_tests():
    """ui/test/: edge projection onto collapsed tables, the layout of tall tables, labels, the CSV."""
    proc = subprocess.run(["node", "--test", "test/"], cwd=UI, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
