"""Airflow 3 UI plugin: the "Column lineage" tabs (column_lineage), their FastAPI app (app) and graph
building (graph)."""
