"""OpenLineage dataset names for tables and paths, as openlineage-spark names them.

A catalog table is named by its storage location, so that our datasets merge
with those Spark's own integration emits; the catalog name stays beside it.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from airflow_lineage_provider.lineage.model import Dataset

_S3_SCHEMES = ("s3", "s3a", "s3n")


def table_name(identifier: dict | None) -> str | None:
    """``catalog.database.table`` in lower case from a Spark ``TableIdentifier`` JSON."""
    if not isinstance(identifier, dict) or not identifier.get("table"):
        return None
    parts = [identifier.get("catalog") or "spark_catalog", identifier.get("database") or "default", identifier["table"]]
    return ".".join(str(p).lower() for p in parts)


def from_location(location: str | None, *, table: str | None = None, mode: str | None = None) -> Dataset:
    """Name a dataset by its storage URI; with no known location, by its catalog name."""
    if not location:
        return Dataset(namespace="spark_catalog", name=table or "unknown", table=table, mode=mode)
    namespace, name = split_uri(location)
    return Dataset(namespace=namespace, name=name, table=table, mode=mode)


def split_uri(uri: str) -> tuple[str, str]:
    """(namespace, name) of a storage URI by OpenLineage's naming spec.

    ``file:/a/b`` -> (``file``, ``/a/b``); ``hdfs://nn:8020/a`` -> (``hdfs://nn:8020``, ``/a``);
    ``s3a://bucket/key`` -> (``s3://bucket``, ``key``); a bare path is a local file.
    """
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or len(scheme) == 1:  # a bare path, or a Windows drive letter
        return "file", uri.rstrip("/") or "/"
    if scheme == "file":
        return "file", (parts.path.rstrip("/") or "/")
    if scheme in ("abfs", "abfss", "wasb", "wasbs"):
        # Azure: the part before '@' is the container, which OpenLineage keeps in the namespace.
        return f"{scheme}://{parts.netloc}", parts.path.lstrip("/").rstrip("/")
    netloc = parts.netloc.rsplit("@", 1)[-1]  # never keep credentials
    if scheme in _S3_SCHEMES:
        return f"s3://{netloc}", parts.path.lstrip("/").rstrip("/")
    if scheme == "gs":
        return f"gs://{netloc}", parts.path.lstrip("/").rstrip("/")
    return urlunsplit((scheme, netloc, "", "", "")), (parts.path.rstrip("/") or "/")
