"""job/command.py: what a launcher builds is what the driver parses, flag for flag."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job import command


@pytest.mark.parametrize("kwargs", [
    {},
    {"dry_run": True, "keep_going": True},
    {"sql_file": "hdfs://nn/x/script.sql", "no_capture": True},
    {"app": "/jobs/app.py", "app_args": ["--dump", "not ours", "--", "-x"]},  # the app's flags stay its own
    {"app": "s3a://b/app.py", "app_args": []},
])
def test_the_driver_parses_back_what_a_launcher_built(kwargs):
    argv = command.arguments("/tmp/dump dir", **kwargs)
    parsed = command.parse(argv)
    expected = command.DriverArgs(dump="/tmp/dump dir", **{**kwargs, "app_args": tuple(kwargs.get("app_args", ()))})
    assert parsed == expected


def test_a_bad_command_line_is_argparses_error(capsys):
    with pytest.raises(SystemExit):
        command.parse(["--dry-run"])
    assert "--dump" in capsys.readouterr().err
