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
