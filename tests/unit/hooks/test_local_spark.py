"""hooks/local_spark.py: what the CLI shows of a failed job's stderr has its credentials hidden."""

from __future__ import annotations

import subprocess

from airflow_lineage_provider.hooks import local_spark


def test_the_stderr_tail_of_a_failed_job_is_scrubbed(monkeypatch, tmp_path):
    said = ("[PARSE_SYNTAX_ERROR] ... OPTIONS (url 'jdbc:postgresql://etl:Pw1secret@h/db', "
            "sfPassword 'Pw2secret'); SET spark.hadoop.fs.s3a.secret.key=Pw3secret")

    def fake_run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, stdout=None, stderr=said)

    monkeypatch.setattr(local_spark.subprocess, "run", fake_run)
    code, tail = local_spark.run_driver(str(tmp_path / "dump"), master="spark://nowhere:7077", quiet=True)
    assert code == 1
    assert "PARSE_SYNTAX_ERROR" in tail and "sfPassword" in tail
    assert not any(secret in tail for secret in ("Pw1secret", "Pw2secret", "Pw3secret")), tail


def test_one_release_of_pyspark_and_pyspark_client_is_no_mismatch():
    assert local_spark.pair_mismatch() is None  # the project's own environment: one pair (scripts/setup.sh)


def test_two_releases_of_the_one_pyspark_module_are_named_with_the_fix(monkeypatch, tmp_path):
    """A pyspark-client of another release first on the path, as pip leaves its metadata: the message names both."""
    import importlib.metadata as md

    info = tmp_path / "pyspark_client-4.1.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pyspark-client\nVersion: 4.1.3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert md.version("pyspark-client") == "4.1.3"
    message = local_spark.pair_mismatch()
    assert message is not None
    assert f"pyspark {md.version('pyspark')} and pyspark-client 4.1.3" in message
    assert 'pip install "pyspark==4.1.3" "pyspark-client==4.1.3"' in message
