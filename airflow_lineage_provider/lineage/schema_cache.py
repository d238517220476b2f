"""The schemas of the catalog tables a task's runs have seen, kept between runs.

The plan side writes it after each run (the columns of what the plans read and
wrote); the static extractor reads it at the next run's start, so START lineage
knows tables another task creates. Standard library only.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Iterable


class SchemaCache:
    """A JSON-file-backed mapping ``table -> [[column, type], ...]`` (thread-safe, written atomically).

    ``get``/``put``/``save``; the hook can ``put`` the schemas of tables it saw in a plan
    and ``save``, so that the next static extraction knows them before Spark runs.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self._lock = threading.Lock()
        self._data: dict[str, list[list[str]]] = {}
        if self.path and os.path.exists(self.path):
            try:
                with open(self.path, encoding="utf-8") as f:
                    raw = json.load(f)
                tables = (raw.get("tables") or {}).items()
                self._data = {str(k).lower(): [list(map(str, c)) for c in v] for k, v in tables}
            except (OSError, ValueError, AttributeError, TypeError):
                self._data = {}

    def get(self, table: str) -> list[tuple[str, str]] | None:
        with self._lock:
            cols = self._data.get(table.lower())
        return [(c[0], c[1] if len(c) > 1 else "") for c in cols] if cols is not None else None

    def put(self, table: str, columns: Iterable[tuple[str, str] | str]) -> None:
        cols = [[c, ""] if isinstance(c, str) else [str(c[0]), str(c[1])] for c in columns]
        with self._lock:
            self._data[table.lower()] = cols

    def tables(self) -> list[str]:
        with self._lock:
            return sorted(self._data)

    def save(self) -> None:
        if not self.path:
            return
        with self._lock:
            payload = json.dumps({"format": "airflow-lineage-schema/1", "tables": self._data}, indent=1, sort_keys=True)
        tmp = f"{self.path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(payload)
        os.replace(tmp, self.path)
