"""A Spark Connect client's side of the capture on the server (``docs/spark-connect.md``).

The server runs the JVM listener with a base dump location (``jvm_listener.connect_server_conf``); the
client names its key under that base and the secret that seals the key's files (``start``), and when it
is done runs the barrier and reads what the server wrote for the key (``finish``). The client never
reaches the server's JVM: the key travels as a ``SET`` command (the server binds it to this session), the
secret as a runtime conf of the session, the barrier as a ``SET`` command, and the records through a
location both can reach (a shared directory, ``file://`` on a shared mount, ``hdfs://``, ``s3a://``:
``dump_location``). Every call to the server is bounded by the capture's timeout: a server that is gone
costs the lineage, never the task's time beyond it. No Airflow import: the operator side
(``hooks/session_capture.py``, ``operators/session.py``) calls it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import shutil
import threading
import time
import uuid
from typing import Any, Callable, TypeVar

from airflow_lineage_provider.hooks import dump_location
from airflow_lineage_provider.hooks.jvm_listener import (
    CONNECT_BASE_CONF,
    FLUSH_CONF,
    KEY_CONF,
    LISTENER_CLASS,
    LISTENERS_CONF,
    SECRET_CONF,
)
from airflow_lineage_provider.job.dump import PLANS, RESULT, JobResult, read_records

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
_POLL_S = 0.2
_UNSEEN_S = 10.0
SEAL = "seal"  # the listener's DumpFiles.SEAL: HMAC-SHA256 of plans.jsonl then result.json, under the secret
_NONCE = re.compile(r"-[0-9a-f]{6,}$")
T = TypeVar("T")


class ServerTimeoutError(RuntimeError):
    """The Spark Connect server did not answer a call of the capture in time."""


def bounded(call: Callable[[], T], timeout: float, what: str) -> T:
    """``call()``'s value, or ``ServerTimeoutError`` after ``timeout`` seconds. The Connect client retries a server
    that is gone for minutes on its own policy; the capture's waits must stay within its timeout, so the
    call runs on a daemon thread that is left behind when it does not return (it never holds the task)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = e

    worker = threading.Thread(target=run, name=f"airflow-lineage-{what}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise ServerTimeoutError(f"the Spark Connect server did not answer the {what} within {timeout:g} s "
                            "(is it still running and reachable?)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def shown_key(key: str) -> str:
    """``key`` as logs and warnings show it: the nonce of a task try's key hidden, so what a task's log
    shows never names its key whole (a key belongs to its session on the server; this is one more fence)."""
    head, _, last = key.rpartition("/")
    last = _NONCE.sub("-********", last)
    return f"{head}/{last}" if head else last


def server_base(spark: Any, *, timeout: float = DEFAULT_TIMEOUT_S) -> tuple[str | None, str]:
    """The base the server's listener writes under, as the server names it, or ``None`` and why there is
    none. A client reads the server's static confs like any other: so a task learns from the server itself
    whether it runs the listener, and where (``docs/spark-connect.md``)."""
    try:
        listeners, base = bounded(lambda: (spark.conf.get(LISTENERS_CONF, "") or "",
                                           spark.conf.get(CONNECT_BASE_CONF, "") or ""),
                                  timeout, "lineage settings' read")
    except ServerTimeoutError as e:
        return None, str(e)
    except Exception as e:  # noqa: BLE001 - lineage never breaks the job
        return None, f"the Spark Connect server's settings could not be read ({type(e).__name__}: {e})"
    if LISTENER_CLASS not in [c.strip() for c in listeners.split(",")]:
        return None, (f"the Spark Connect server does not run the column lineage listener ({LISTENERS_CONF} "
                      f"has no {LISTENER_CLASS}: see airflow-lineage connect-server-conf)")
    if not base:
        return None, f"the Spark Connect server runs the column lineage listener without {CONNECT_BASE_CONF}"
    return base, ""


def start(spark: Any, key: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """Name this session's key: the server captures its writes from now on into ``<base>/<key>/``, sealed
    with the secret returned (pass it to ``finish``). The secret goes first, as a runtime conf no other
    session reads; the key as a ``SET`` command, whose event binds the key to this session on the server
    before any file of it exists. Raises what the server raised, or ``ServerTimeoutError``."""
    secret = secrets.token_hex(32)

    def claim() -> None:
        spark.conf.set(SECRET_CONF, secret)
        spark.sql(f"SET {KEY_CONF}={key}")

    bounded(claim, timeout, "start of the lineage capture")
    return secret


def stop(spark: Any) -> None:
    """This session's later statements are no longer captured (best effort: the session may be gone)."""
    for conf in (KEY_CONF, SECRET_CONF):
        try:
            spark.conf.unset(conf)
        except Exception as e:  # noqa: BLE001 - lineage never breaks the job
            log.debug("The lineage conf %s could not be unset: %s", conf, e)


def key_location(base: str, key: str) -> str:
    """Where the server writes ``key``'s dump: ``<base>/<key>``, as the listener joins them."""
    return f"{base.rstrip('/')}/{key}"


def finish(spark: Any, base: str, key: str, *, secret: str | None = None, timeout: float = DEFAULT_TIMEOUT_S,
           keep: bool = False) -> JobResult:
    """Run the barrier, wait (at most ``timeout`` seconds in all) for the server's result of ``key``, read the
    key's dump and remove it (``keep``: leave it); the session's key is unset. ``secret``: what ``start``
    returned; the dump is taken only when its seal matches it. Never raises: what went wrong is the result's
    warning.

    The barrier's token is fresh, so a result left by an earlier barrier of the same key is never taken
    for this one's. A local base this worker does not see is given up after ``_UNSEEN_S``, not ``timeout``:
    the server writes where this worker cannot look, and waiting longer would only delay the task.
    """
    token = uuid.uuid4().hex
    started = time.monotonic()
    shown = shown_key(key)

    def barrier() -> None:
        try:
            spark.sql(f"SET {FLUSH_CONF}={token}")
        finally:
            stop(spark)

    try:
        bounded(barrier, timeout, "lineage barrier")
    except ServerTimeoutError as e:
        return _nothing(str(e))
    except Exception as e:  # noqa: BLE001 - the session failed: the job's own error is the user's to see
        return _nothing(f"the lineage barrier could not run on the Spark Connect server: {e}")
    location = key_location(base, key)
    local_base = dump_location.local_path(base)
    while True:
        try:
            with dump_location.fetched(location) as local:
                if os.path.exists(os.path.join(local, RESULT)):
                    result, broken = _sealed(local, secret, token)
                    if result is not None or broken:
                        if not keep:
                            forget(base, key)  # read: the server's base keeps no task's records
                        return result if result is not None else _nothing(broken.format(key=shown))
        except (dump_location.DumpLocationError, OSError) as e:
            return _nothing(str(e))
        waited = time.monotonic() - started
        if local_base is not None and not os.path.isdir(local_base) and waited >= min(_UNSEEN_S, timeout):
            return _nothing(f"the Spark Connect server's lineage location {base} is not a directory on this worker "
                            f"(set [column_lineage] connect_dump_base to where this worker reaches it)")
        if waited >= timeout:
            return _nothing(
                f"the Spark Connect server wrote no lineage result for key {shown} under {base} within {timeout:g} s "
                f"(is it running the listener with {CONNECT_BASE_CONF}={base}, and is that location shared with "
                "this worker? the listener's warning is in the server's log)")
        time.sleep(_POLL_S)


def _sealed(local: str, secret: str | None, token: str) -> tuple[JobResult | None, str]:
    """The key's dump in ``local`` when it answers ``token`` and its seal matches ``secret``: ``(result, "")``;
    ``(None, why)`` when it answers ``token`` but is not what the server wrote; ``(None, "")`` when it is
    not this barrier's yet. The bytes are read once: what is checked is what is read."""
    def raw(name: str) -> bytes:
        try:
            with open(os.path.join(local, name), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return b""

    plans, result, seal = raw(PLANS), raw(RESULT), raw(SEAL)
    try:
        outcome = json.loads(result)
        answered = outcome.get("barrier") == token
    except (ValueError, AttributeError):
        return None, ""  # torn, or not the server's: its own result replaces it
    if not answered:
        return None, ""
    if secret is not None:
        expected = hmac.new(secret.encode(), plans + result, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(expected, seal.strip()):
            return None, ("the lineage files of key {key} do not carry the Spark Connect server's seal: something "
                          "other than the server wrote or changed them, so they are refused")
    records, warnings = read_records(plans.decode("utf-8", errors="replace").splitlines())
    return JobResult.read(outcome, records, warnings), ""


def forget(base: str, key: str) -> None:
    """Remove ``key``'s records, and the directories of a local base it leaves empty (best effort). In a
    local base nothing is followed out of it: a key's path through a symbolic link is left as it is."""
    local = dump_location.local_path(base)
    if local is None:
        dump_location.remove(key_location(base, key))
        return
    parts = key.split("/")
    path = local
    for part in parts:
        path = os.path.join(path, part)
        if os.path.islink(path):
            log.warning("The lineage location of key %s holds a symbolic link (%s): it is not removed",
                        shown_key(key), os.path.relpath(path, local))
            return
    shutil.rmtree(path, ignore_errors=True)  # rmtree removes links inside, never what they name
    parts.pop()
    while parts:
        try:
            os.rmdir(os.path.join(local, *parts))  # only an empty one: another try's key may share it
        except OSError:
            return
        parts.pop()


def _nothing(why: str) -> JobResult:
    log.warning("No plan column lineage: %s", why)
    return JobResult(warnings=[f"no plan lineage: {why}"])
