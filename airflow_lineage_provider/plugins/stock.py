"""The listener that gives unchanged ``SparkSubmitOperator`` / ``SparkSqlOperator`` tasks column lineage.

One option, off by default: ``[column_lineage] stock_spark_operators = True`` (``conf.py``). How it
hooks in: a task listener (``on_task_instance_running``, called first), registered by the
``column_lineage_stock`` plugin. It runs where the task runs, after Airflow has rendered the task's
templates and just before ``execute()``, in ``dag.test()``, ``airflow dags test`` and real workers
alike (a cluster policy changes the tasks of DAGs parsed into a DAG bag; ``dag.test()`` runs those of
the DAG object it is called on, which no policy has seen). What the task then becomes is
``operators/stock.py``'s.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow.plugins_manager import AirflowPlugin
from pluggy import HookimplMarker

log = logging.getLogger(__name__)
hookimpl = HookimplMarker("airflow")  # Airflow's listener marker (the project name is what pluggy matches)


class StockSparkListener:
    """Called first when a task starts, before OpenLineage's listener asks the task for its facets."""

    @hookimpl(tryfirst=True)
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        task = getattr(task_instance, "task", None)
        if task is None:
            return
        try:
            from airflow_lineage_provider.operators.stock import adopt

            adopt(task)
        except Exception as e:  # noqa: BLE001 - lineage never changes the task's outcome
            log.warning("Column lineage: task %s runs without the capture: %s: %s",
                        getattr(task, "task_id", "?"), type(e).__name__, e)


class StockSparkLineagePlugin(AirflowPlugin):
    """Registers the listener (``airflow.plugins`` entry point); it does nothing while the option is off."""

    name = "column_lineage_stock"
    listeners = [StockSparkListener()]
