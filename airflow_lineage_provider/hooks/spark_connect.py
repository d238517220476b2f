"""A Spark Connect client's side of the capture on the server (``docs/spark-connect.md``).

The server runs the JVM listener with a base dump location (``jvm_listener.connect_server_conf``); the
client names its key under that base (``start``), and when it is done runs the barrier and reads what the
server wrote for the key (``finish``). The client never reaches the server's JVM: the key travels as a
runtime conf of its session, the barrier as a ``SET`` command, and the records through a location both
can reach (a shared directory, ``file://`` on a shared mount, ``hdfs://``, ``s3a://``: ``dump_location``).
No Airflow import: the operator side (``operators/connect.py``) and part B's task types call it.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from typing import Any

from airflow_lineage_provider.hooks import dump_location
from airflow_lineage_provider.hooks.jvm_listener import CONNECT_BASE_CONF, FLUSH_CONF, KEY_CONF
from airflow_lineage_provider.job.dump import RESULT, JobResult, read_dump

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
_POLL_S = 0.2


def start(spark: Any, key: str) -> None:
    """Name this session's key: the server captures its writes from now on into ``<base>/<key>/``."""
    spark.conf.set(KEY_CONF, key)


def stop(spark: Any) -> None:
    """This session's later statements are no longer captured (best effort: the session may be gone)."""
    try:
        spark.conf.unset(KEY_CONF)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        log.debug("The lineage key could not be unset: %s", e)


def key_location(base: str, key: str) -> str:
    """Where the server writes ``key``'s dump: ``<base>/<key>``, as the listener joins them."""
    return f"{base.rstrip('/')}/{key}"


def finish(spark: Any, base: str, key: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> JobResult:
    """Run the barrier, wait (at most ``timeout`` seconds) for the server's result of ``key``, and read the
    key's dump; the session's key is unset. Never raises: what went wrong is the result's warning.

    The barrier's token is fresh, so a result left by an earlier barrier of the same key is never taken
    for this one's.
    """
    token = uuid.uuid4().hex
    try:
        spark.sql(f"SET {FLUSH_CONF}={token}")
    except Exception as e:  # noqa: BLE001 - the session failed: the job's own error is the user's to see
        stop(spark)
        return _nothing(f"the lineage barrier could not run on the Spark Connect server: {e}")
    stop(spark)
    location = key_location(base, key)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with dump_location.fetched(location) as local:
                if os.path.exists(os.path.join(local, RESULT)):
                    result = read_dump(local)
                    if result.barrier == token:
                        return result
        except (dump_location.DumpLocationError, OSError) as e:
            return _nothing(str(e))
        if time.monotonic() >= deadline:
            return _nothing(
                f"the Spark Connect server wrote no lineage result for key {key} in {location} within {timeout:g} s "
                f"(is it running the listener with {CONNECT_BASE_CONF}={base}, and is that location shared with "
                "this worker? the listener's warning is in the server's log)")
        time.sleep(_POLL_S)


def _nothing(why: str) -> JobResult:
    log.warning("No plan column lineage: %s", why)
    return JobResult(warnings=[f"no plan lineage: {why}"])
