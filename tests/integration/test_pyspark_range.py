"""The ends of the worker's pyspark range (``pyproject.toml``): the provider installed with a pair of another
release than the project's own, in a fresh virtual environment, and the example DAG run there with
``airflow dags test`` as the README's first command runs it.

The lower end is the 4.0 pair; the upper end the 4.3 pair, which PyPI cannot install yet (``pyspark-client``
4.3.0 does not exist; ``pyspark`` 4.3.0 does): that case skips with pip's own words until it can. The 4.2 pair is
the project's own ``.venv`` (``test_example_dag.py``). The environments are kept outside the checkout, in
``<CACHE>/spark-venvs-py<3.N>/pair-<X>-<hash of pyproject.toml>``, made again when the project's dependencies
change (the provider installed editable: the tree's code, the pair's dependencies; pointed at this checkout
again when another clone made it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import jvm
from tests.helpers import ROOT, document_edges
from tests.integration.spark_versions import VENVS
from tests.integration.test_example_dag import SEED_JOIN, SEED_SINGLE

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow]

ENDS = ("4.0.4", "4.3.0")


def pair_venv(version: str) -> Path:
    """An environment of its own with the provider and ``pyspark`` == ``pyspark-client`` == ``version``, or a
    skip with pip's reason it cannot be made."""
    digest = hashlib.sha1((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:12]
    where = VENVS / f"pair-{version}-{digest}"
    python = str(where / "bin" / "python")
    if (where / ".installed").exists():
        if (where / ".installed").read_text() != str(ROOT):  # made by another clone: its code is this tree's
            uv = Path(sys.executable).parent / "uv"  # scripts/setup.sh installs it: seconds where pip takes ~15
            installer = ([str(uv), "pip", "install", "-q", "--python", python] if uv.exists()
                         else [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"])
            subprocess.run([*installer, "--no-deps", "-e", str(ROOT)], check=True, capture_output=True, timeout=600)
            (where / ".installed").write_text(str(ROOT))
        return where
    for stale in VENVS.glob(f"pair-{version}-*"):  # made for dependencies the project no longer has
        shutil.rmtree(stale, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(where)], check=True)
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "-e", str(ROOT), f"pyspark=={version}", f"pyspark-client=={version}"],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        why = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()[-1:]
        pytest.skip(f"the pair pyspark == pyspark-client == {version} cannot be installed: {' '.join(why)[:300]}")
    (where / ".installed").write_text(str(ROOT))
    return where


@pytest.mark.parametrize("version", ENDS)
def test_the_example_dag_runs_on_an_end_of_the_range(version, tmp_path):
    env = pair_venv(version)
    python = str(env / "bin" / "python")
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    versions = subprocess.run([python, "-c", "import importlib.metadata as md, pyspark; "
                               "print(md.version('pyspark'), md.version('pyspark-client'), pyspark.__version__)"],
                              capture_output=True, text=True, check=True).stdout.split()
    assert versions == [version] * 3
    home = tmp_path / "airflow"
    run_env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags_examples"),
               "AIRFLOW_LINEAGE_LOCAL_DIR": str(home / "spark_local"), "PATH": f"{env / 'bin'}:{os.environ['PATH']}"}
    run_env.pop("PYTHONPATH", None)
    subprocess.run([str(env / "bin" / "airflow"), "db", "migrate"], env=run_env, check=True, capture_output=True)
    [spark_home] = env.glob("lib/python3*/site-packages/pyspark")
    with jvm.options_for(spark_home) as options:  # the pair's own class-data archive
        dag = subprocess.run([str(env / "bin" / "airflow"), "dags", "test", "spark_column_lineage_demo"],
                             env={**run_env, "SPARK_SUBMIT_OPTS": options}, capture_output=True, text=True, timeout=900)
    assert dag.returncode == 0 and "state=success" in dag.stdout + dag.stderr, (dag.stdout + dag.stderr)[-3000:]
    shown = subprocess.run([str(env / "bin" / "airflow-lineage"), "show", "--dag-id", "spark_column_lineage_demo",
                            "--format", "json"], env=run_env, capture_output=True, text=True, check=True)
    statements = json.loads(shown.stdout)["tasks"]["build_dwd_users"]["statements"]
    single, join = [s for s in statements if s["target"]]
    assert document_edges(single) == SEED_SINGLE and document_edges(join) == SEED_JOIN
    assert all(s["confidence"] == 1.0 and s["warnings"] == [] for s in statements)
