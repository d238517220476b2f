"""Shared bench helpers: an in-process Spark with the embedded settings, timing statistics."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def spark_session(master: str = "local[2]") -> Any:
    from pyspark.sql import SparkSession

    from airflow_lineage_provider.hooks import local_spark

    for key, value in local_spark.local_env().items():
        os.environ.setdefault(key, value)
    state = tempfile.mkdtemp(prefix="airflow-lineage-bench-")
    builder = SparkSession.builder.master(master).appName("airflow-lineage-bench")
    for key, value in local_spark.local_conf(state).items():
        builder = builder.config(key, value)
    return builder.enableHiveSupport().getOrCreate()


def stop_spark(spark: Any) -> None:
    """Stop Spark and end its JVM, so that what is timed next runs as on an Airflow worker.

    An idle JVM still compiles and collects on this machine's two cores; timings taken
    beside it came out up to 1.5x slower, for us and the peers alike.
    """
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        proc = getattr(gateway, "proc", None)
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
        SparkContext._gateway = SparkContext._jvm = None


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def per_item_best(fn: Callable[[Any], Any], items: list[Any], passes: int) -> list[float]:
    """For each item, the best of ``passes`` timings of ``fn(item)`` (seconds).

    The best, as ``timeit`` takes it: what the code costs. This machine is shared; a slower pass
    measures its other tenants. Every tool is timed the same way, so the ratios are like for like.
    """
    return interleaved({"": fn}, items, passes)[""]


def interleaved(fns: dict[str, Callable[[Any], Any]], items: list[Any], passes: int) -> dict[str, list[float]]:
    """``per_item_best`` for several tools at once, taking turns on each item.

    The machine's speed drifts over a run; tools timed one after the other in turn see the
    same drift, so their ratio holds even when the absolute figures move.
    """
    best: dict[str, list[float]] = {label: [float("inf")] * len(items) for label in fns}
    for _ in range(passes):
        for i, item in enumerate(items):
            for label, fn in fns.items():
                best[label][i] = min(best[label][i], timed(lambda: fn(item))[0])
    return best


def best_of(fn: Callable[[], Any], passes: int) -> float:
    """The best of ``passes`` timings of ``fn()`` (seconds)."""
    return min(timed(fn)[0] for _ in range(passes))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def write_section(section: str, text: str) -> None:
    """Replace the section headed ``section`` of docs/benchmarks.md with ``text`` (or add it after the
    intro); the other sections stay as they are."""
    path = ROOT / "docs" / "benchmarks.md"
    doc = path.read_text()
    if section in doc:
        start = doc.index(section)
        nxt = doc.find("\n## ", start + len(section))
        doc = doc[:start] + text + ("\n" + doc[nxt + 1:] if nxt != -1 else "")
    else:
        first = doc.index("\n## ")
        doc = doc[:first + 1] + text + "\n" + doc[first + 1:]
    path.write_text(doc)
