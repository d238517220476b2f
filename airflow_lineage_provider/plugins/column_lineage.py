"""The Airflow 3 plugin: a "Column lineage" tab on task instances and DAG runs, and a page in the menu.

Registered through the ``airflow.plugins`` entry point (a provider's ``plugins`` key is read
only when lazy provider discovery is off). The tabs are ``external_views`` shown in an iframe; the
menu's page traces a column across DAGs. The pages and their JSON API live in the FastAPI app of
``plugins/app.py`` under ``/column-lineage``.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from airflow_lineage_provider.plugins.app import URL_PREFIX, app


class ColumnLineagePlugin(AirflowPlugin):
    """Column lineage views in the Airflow UI."""

    name = "column_lineage"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "Column lineage"}]
    external_views = [
        {
            "name": "Column lineage",
            "href": URL_PREFIX + "/dags/{DAG_ID}/runs/{RUN_ID}/tasks/{TASK_ID}?map_index={MAP_INDEX}",
            "destination": "task_instance",
            "url_route": "column-lineage",
        },
        {
            "name": "Column lineage",
            "href": URL_PREFIX + "/dags/{DAG_ID}/runs/{RUN_ID}",
            "destination": "dag_run",
            "url_route": "column-lineage-run",
        },
        {  # a column's trace across every DAG, in Airflow's menu
            "name": "Column lineage",
            "href": URL_PREFIX + "/trace",
            "destination": "nav",
            "url_route": "column-lineage-trace",
        },
    ]
