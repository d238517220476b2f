"""OpenLineage dataset names for tables and paths, as openlineage-spark names them.

A catalog table is named by its storage location, so that our datasets merge
with those Spark's own integration emits; the catalog name stays beside it.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote, unquote

from airflow_lineage_provider.lineage.model import SPARK_CATALOG, Dataset
from airflow_lineage_provider.lineage.redact import scrub_location, strip_jdbc_credentials

_S3_SCHEMES = ("s3", "s3a", "s3n")


def table_name(identifier: dict | None) -> str | None:
    """``catalog.database.table`` in lower case from a Spark ``TableIdentifier`` JSON."""
    if not isinstance(identifier, dict) or not identifier.get("table"):
        return None
    parts = [identifier.get("catalog") or SPARK_CATALOG, identifier.get("database") or "default", identifier["table"]]
    return ".".join(str(p).lower() for p in parts)


def from_location(location: str | None, *, table: str | None = None, mode: str | None = None) -> Dataset:
    """Name a dataset by its storage URI; with no known location, by its catalog name. A credential in
    the location is masked in place (``redact.scrub_location``): the one name of the dataset everywhere,
    as the SQL text shows it, each directory where it was."""
    if not location:
        return Dataset(namespace=SPARK_CATALOG, name=table or "unknown", table=table, mode=mode)
    namespace, name = split_uri(scrub_location(location))
    return Dataset(namespace=namespace, name=name, table=table, mode=mode)


def warehouse_location(table: str, warehouse: str) -> str:
    """Where Spark keeps a managed table of ``warehouse``: ``warehouse/t``, or ``warehouse/db.db/t``."""
    parts = table.split(".")
    database, name = (parts[-2], parts[-1]) if len(parts) >= 2 else ("default", parts[-1])
    return os.path.join(warehouse, name) if database == "default" else os.path.join(warehouse, f"{database}.db", name)


def split_uri(uri: str) -> tuple[str, str]:
    """(namespace, name) of a storage location by OpenLineage's naming spec.

    ``file:/a/b`` -> (``file``, ``/a/b``); ``hdfs://nn:8020/a`` -> (``hdfs://nn:8020``, ``/a``);
    ``s3a://bucket/key`` -> (``s3://bucket``, ``key``); a bare path is a local file.

    ``uri`` is the location as written (as Spark prints a Hadoop ``Path``, as a user writes it in
    SQL): the name keeps its path exactly, ``#``, ``?``, ``%``, spaces and letters beyond ASCII
    included; it is never split at ``#`` or ``?`` as a URL would be, and never decoded. A location
    spelled as a ``java.net.URI`` (a catalog's, percent-encoded) goes through ``as_written`` first.
    """
    m = _SCHEME.match(uri)
    if m is None:  # a bare path, or a Windows drive letter
        return "file", _trim(uri)
    scheme, rest = m.group(1).lower(), uri[m.end():]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        path = slash + path
    else:
        authority, path = "", rest
    if scheme == "file":
        return "file", _trim(path)
    if scheme in ("abfs", "abfss", "wasb", "wasbs"):
        # Azure: the part before '@' is the container, which OpenLineage keeps in the namespace.
        return f"{scheme}://{authority}", path.lstrip("/").rstrip("/")
    netloc = authority.rsplit("@", 1)[-1]  # never keep credentials
    if scheme in _S3_SCHEMES:
        return f"s3://{netloc}", path.lstrip("/").rstrip("/")
    if scheme == "gs":
        return f"gs://{netloc}", path.lstrip("/").rstrip("/")
    return (f"{scheme}://{netloc}" if netloc else f"{scheme}:"), _trim(path)


# A URI scheme (RFC 3986): a letter, then letters, digits, "+", "-" or ".", then ":"; two characters at
# least, so that a Windows drive (``C:``) is a path.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):")


def is_uri(location: str) -> bool:
    """``hdfs://nn/x``, ``s3a://b/k``, ``file:///x``: not a bare path (nor a Windows drive ``C:``)."""
    return _SCHEME.match(location) is not None


def _trim(path: str) -> str:
    """A path without its trailing slashes ("/" stays); anything else, a trailing space included, stays."""
    return path.rstrip("/") or "/"


def as_written(uri: str) -> str:
    """A location spelled as a ``java.net.URI`` (a catalog table's location, INSERT OVERWRITE
    DIRECTORY's storage URI: ``file:/a/out%20dir/sp%20ace%231``) as its user wrote it, decoded once:
    ``file:/a/out dir/sp ace#1``. Spark quotes ``%`` itself (``100%`` is ``100%25``), so decoding
    once gives back the ``%`` a user wrote; letters beyond ASCII are kept raw in the URI and stay."""
    return unquote(uri) if "%" in uri else uri


# -- JDBC ------------------------------------------------------------------------------
# OpenLineage's naming spec (spec/Naming.md): a JDBC dataset's namespace is the database
# server, ``{scheme}://{host}:{port}``, and its name the table within it, qualified by
# database and schema as each system does. Credentials are never part of either: they are
# dropped from the URL before it is parsed, and from any text shown to a user.

_JDBC_DEFAULT_PORTS = {
    "postgres": 5432, "mysql": 3306, "mariadb": 3306, "sqlserver": 1433, "oracle": 1521, "db2": 50000,
    "redshift": 5439, "teradata": 1025, "trino": 8080, "presto": 8080, "clickhouse": 8123,
}
# The JDBC sub-protocol's scheme in OpenLineage names.
_JDBC_SCHEMES = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql", "mariadb": "mysql",
                 "sqlserver": "sqlserver", "oracle": "oracle", "db2": "db2", "redshift": "redshift",
                 "teradata": "teradata", "trino": "trino", "presto": "presto", "clickhouse": "clickhouse"}
# Systems whose names are database.schema.table; a table given without a schema is in the default one.
_DEFAULT_SCHEMA = {"postgres": "public", "sqlserver": "dbo", "redshift": "public"}


def jdbc_name(url: str, table: str | None) -> tuple[str, str]:
    """(namespace, name) of a JDBC table by OpenLineage's naming spec, without credentials.

    ``jdbc:postgresql://h:5432/shop`` + ``public.orders`` -> (``postgres://h:5432``,
    ``shop.public.orders``); ``jdbc:mysql://h/shop`` + ``orders`` -> (``mysql://h:3306``,
    ``shop.orders``); ``jdbc:sqlserver://h;databaseName=shop`` + ``orders`` ->
    (``sqlserver://h:1433``, ``shop.dbo.orders``). Other drivers follow the generic rule:
    ``{scheme}://{host}:{port}`` and ``{database}.{table}``; an embedded database with no host
    (``jdbc:derby:/data/db``) is named ``{scheme}:{path}``. A query read (the ``query`` option,
    or a subquery as ``dbtable``) keeps its text, whitespace collapsed, in place of the table.
    """
    clean = strip_jdbc_credentials(url.strip())
    body = clean[5:] if clean.lower().startswith("jdbc:") else clean
    proto, _, rest = body.partition(":")
    proto = proto.lower()
    scheme = _JDBC_SCHEMES.get(proto, proto)
    table = (table or "").strip()
    host = port = database = None
    properties: dict[str, str] = {}
    if proto == "oracle":
        # jdbc:oracle:thin:@host:port:SID or @//host:port/service or @host:port/service
        at = rest.split("@", 1)[-1].lstrip("/")
        m = re.match(r"([^:/?]+)(?::(\d+))?(?:[:/]([^?;]+))?", at)
        if m:
            host, port, database = m.group(1), m.group(2), m.group(3)
    elif rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        authority, *props = authority.split(";")
        if not path and props:  # sqlserver://host:port;databaseName=db
            pass
        path, *more_props = path.split(";")
        props += more_props
        for p in props:
            k, _, v = p.partition("=")
            properties[k.strip().lower()] = v.strip()
        path = path.split("?", 1)[0]
        authority = authority.split(",")[0]  # the first of several hosts
        if authority.startswith("["):  # IPv6
            host, _, tail = authority[1:].partition("]")
            port = tail.lstrip(":") or None
        else:
            host, _, port = authority.partition(":")
            port = port or None
        database = path.strip("/").split("/")[0] or None
        database = database or properties.get("databasename") or properties.get("database")
    else:
        # No authority: an embedded database file (derby, h2, sqlite): its path is the source.
        location = rest.split(";", 1)[0].split("?", 1)[0]
        return f"{scheme}:{location}", table or "unknown"
    port = port or (str(_JDBC_DEFAULT_PORTS[scheme]) if scheme in _JDBC_DEFAULT_PORTS else None)
    host = (host or "localhost").lower()
    if scheme == "redshift" and host.endswith(".redshift.amazonaws.com"):
        host = ".".join(host.split(".")[:2])  # {cluster_identifier}.{region_name}
    namespace = f"{scheme}://{host}" + (f":{port}" if port else "")
    if scheme == "trino" and database:
        parts = rest[2:].partition("/")[2].split("?", 1)[0].strip("/").split("/")
        qualifier = [p for p in parts if p]
    else:
        qualifier = [database] if database else []
    name_parts = [p.strip('"`[]') for p in _split_table(table)] if table else ["unknown"]
    is_query = len(name_parts) == 1 and (" " in name_parts[0] or name_parts[0].startswith("("))
    if scheme in _DEFAULT_SCHEMA and len(name_parts) == 1 and not is_query:
        name_parts = [_DEFAULT_SCHEMA[scheme]] + name_parts
    if qualifier and name_parts and name_parts[0].lower() == qualifier[-1].lower() and len(name_parts) > 2:
        qualifier = qualifier[:-1]
    return namespace, ".".join(qualifier + name_parts)


def _split_table(table: str) -> list[str]:
    """``schema.table`` into its parts; a subquery or query text stays whole."""
    if table.startswith("(") or " " in table.strip():
        return [" ".join(table.split())]
    return [p for p in table.split(".") if p]


def from_jdbc(url: str, table: str | None, *, mode: str | None = None, catalog_name: str | None = None) -> Dataset:
    """A JDBC table as a dataset: OpenLineage's namespace and name.

    Its label (``table``) is the Spark catalog name when Spark has one (a JDBC catalog's
    ``pg.public.orders``), else OpenLineage's URI form ``{namespace}/{name}``.
    """
    namespace, name = jdbc_name(url, table)
    return Dataset(namespace=namespace, name=name, table=catalog_name or f"{namespace}/{name}", mode=mode)


# -- URIs ------------------------------------------------------------------------------


def dataset_uri(namespace: str, name: str) -> str | None:
    """The URI of the dataset OpenLineage names ``namespace`` + ``name``: how an Airflow asset names
    the same table or path (``file:///w/t``, ``s3://bucket/key``, ``hdfs://nn:8020/a``,
    ``postgres://host:5432/db.public.t``), so assets and OpenLineage events name one thing alike.
    ``None`` for a catalog name with no storage location (``spark_catalog``, a sink description):
    it is no URI.

    The name is percent-encoded where a URI needs it, as ``java.net.URI`` quotes a path (Hadoop's
    ``Path.toUri``): a space, ``#``, ``?``, ``%``, a control character and every letter beyond
    ASCII (as UTF-8 octets); ``/``, ``:``, ``@``, ``=``, ``+``, ``&`` and the other sub-delimiters
    stay. ``/data/out dir/sp ace#1`` is ``file:///data/out%20dir/sp%20ace%231``; ``name_of_uri``
    decodes it back to the same name.
    """
    if namespace == "file":
        return "file://" + _quote(name if name.startswith("/") else "/" + name)
    if "://" not in namespace:
        return None
    return namespace.rstrip("/") + "/" + _quote(name.lstrip("/"))


# What stays unquoted in a URI's path: RFC 3986's unreserved characters ("-._~", letters, digits,
# kept by ``quote`` itself), sub-delimiters, ":" and "@" (a path's ``pchar``), and "/".
_PATH_SAFE = "/!$&'()*+,;=:@"


def _quote(path: str) -> str:
    return quote(path, safe=_PATH_SAFE, encoding="utf-8", errors="surrogatepass")


def name_of_uri(uri: str) -> tuple[str, str]:
    """(namespace, name) of a storage dataset's URI (``dataset_uri``'s inverse): decoded once."""
    return split_uri(unquote(uri))


def identity_keys(dataset: Dataset) -> list[str]:
    """What makes two datasets one: its catalog table name, and its storage location unless the
    location is only the catalog's (a static extraction's). A task that reads as a path what another
    wrote as a table, or names by table what another's plan named by location, still joins up
    (the run view's graph, the trace across DAGs)."""
    keys = []
    if dataset.table:
        keys.append("table:" + dataset.table)
    if dataset.namespace != SPARK_CATALOG or not dataset.table:
        keys.append(f"location:{dataset.namespace}|{dataset.name}")
    return keys
