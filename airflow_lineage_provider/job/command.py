"""The driver's command line: built by every launcher, parsed by the driver, spelled here once.

The hook (``spark-submit`` through the Spark provider), the CLI and the benchmarks start the same
driver; a flag added to one and not the others would be silently ignored. So the launchers call
``arguments`` and the driver calls ``parse``. Standard library only: it runs inside Spark.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DriverArgs:
    """What the driver is asked to do: run ``DUMP/script.sql`` (or ``sql_file``), or ``app``."""

    dump: str
    sql_file: str | None = None
    app: str | None = None
    app_args: tuple[str, ...] = field(default_factory=tuple)
    dry_run: bool = False
    keep_going: bool = False
    no_capture: bool = False


def arguments(dump: str, *, sql_file: str | None = None, app: str | None = None, app_args: Sequence[str] = (),
              dry_run: bool = False, keep_going: bool = False, no_capture: bool = False) -> list[str]:
    """The driver's arguments after its path on the ``spark-submit`` command line."""
    args = ["--dump", dump]
    if sql_file:
        args += ["--sql-file", sql_file]
    if dry_run:
        args.append("--dry-run")
    if keep_going:
        args.append("--keep-going")
    if no_capture:
        args.append("--no-capture")
    if app:
        # Everything after "--" is the application's own, so its flags never reach the driver's parser.
        args += ["--app", app, "--", *(str(a) for a in app_args)]
    return args


def parse(argv: Sequence[str], description: str | None = None) -> DriverArgs:
    """The inverse of ``arguments``; exits with argparse's message on a bad command line."""
    argv = list(argv)
    app_args: list[str] = []
    if "--" in argv:  # everything after "--" belongs to the application
        cut = argv.index("--")
        argv, app_args = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--sql-file", help="the script; default DIR/script.sql")
    ap.add_argument("--app", metavar="SCRIPT.py", help="run this PySpark application instead of SQL")
    ap.add_argument("--dump", required=True,
                    help="directory (or Hadoop file system URI) for plans.jsonl and result.json")
    ap.add_argument("--dry-run", action="store_true", help="run DDL, only analyze writes")
    ap.add_argument("--keep-going", action="store_true", help="report a failing statement and go on")
    ap.add_argument("--no-capture", action="store_true", help="run the SQL without capturing plans (benchmarks)")
    ns = ap.parse_args(argv)
    return DriverArgs(dump=ns.dump, sql_file=ns.sql_file, app=ns.app, app_args=tuple(app_args),
                      dry_run=ns.dry_run, keep_going=ns.keep_going, no_capture=ns.no_capture)
