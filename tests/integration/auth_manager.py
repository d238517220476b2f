"""An Airflow auth manager for the tests of per-DAG permissions: SimpleAuthManager (its users, roles, login
page and tokens), except that ``AIRFLOW_LINEAGE_TEST_HIDDEN`` (``user:dag_a|dag_b,other:dag_c``) takes
DAGs away from users, as a FAB or Keycloak deployment's per-DAG roles would. The plugin asks it as it asks
any auth manager (``is_authorized_dag``), so what it shows a user is what a real deployment would."""

from __future__ import annotations

import os

from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager


def hidden_dags() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for part in os.environ.get("AIRFLOW_LINEAGE_TEST_HIDDEN", "").split(","):
        if ":" in part:
            user, dags = part.split(":", 1)
            out[user.strip()] = {d.strip() for d in dags.split("|") if d.strip()}
    return out


class PerDagAuthManager(SimpleAuthManager):
    def is_authorized_dag(self, *, method, user, access_entity=None, details=None) -> bool:
        if details is not None and details.id in hidden_dags().get(user.get_name(), set()):
            return False
        return super().is_authorized_dag(method=method, user=user, access_entity=access_entity, details=details)
