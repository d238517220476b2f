"""The seed cases' expected edges, shared by the plan and the static extractor's tests.

Both extractors must give the same answer; the database differs between fixtures
(the plan fixtures were captured in ``demo``, the static tests use ``default``).
"""

from __future__ import annotations

from airflow_lineage_provider.lineage.model import IDENTITY, TRANSFORMATION

Edges = dict[str, set[tuple[str, str, str, str]]]


def seed_single_edges(database: str) -> Edges:
    """``INSERT INTO dwd_users SELECT id, name, name AS company_name, ... FROM ods_users``."""
    ods = f"spark_catalog.{database}.ods_users"
    return {
        "id": {(ods, "id", IDENTITY, "ods_users.id")},
        "name": {(ods, "name", IDENTITY, "ods_users.name")},
        "company_name": {(ods, "name", IDENTITY, "ods_users.name")},
        "birthday": {(ods, "birthday", IDENTITY, "ods_users.birthday")},
        "ts": {(ods, "ts", IDENTITY, "ods_users.ts")},
        "p": {(ods, "birthday", TRANSFORMATION, "date_format(ods_users.birthday, 'yyyyMMdd')")},
    }


def seed_join_edges(database: str) -> Edges:
    """The seed join of ``ods_users a`` and ``dim_company b``."""
    ods, dim = f"spark_catalog.{database}.ods_users", f"spark_catalog.{database}.dim_company"
    return {
        "id": {(ods, "id", IDENTITY, "a.id")},
        "name": {(ods, "name", TRANSFORMATION, "concat(a.name, b.company_name)"),
                 (dim, "company_name", TRANSFORMATION, "concat(a.name, b.company_name)")},
        "company_name": {(dim, "company_name", IDENTITY, "b.company_name")},
        "birthday": {(ods, "birthday", IDENTITY, "a.birthday")},
        "ts": {(ods, "ts", IDENTITY, "a.ts")},
        "p": {(ods, "birthday", TRANSFORMATION, "date_format(a.birthday, 'yyyyMMdd')")},
    }
