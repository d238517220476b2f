"""Field lineage from SQL text alone (sqlglot, ``spark`` dialect): ``"method": "sql"``.

The only package that imports sqlglot; the Spark driver never ships it.
"""

from airflow_lineage_provider.lineage.sql.extractor import SqlExtractor, extract_script, read_ddl_files

__all__ = ["SqlExtractor", "extract_script", "read_ddl_files"]
