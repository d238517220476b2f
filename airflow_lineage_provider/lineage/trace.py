"""A column's lineage across DAGs: every task's lineage joined where one task writes a dataset another reads.

A run's document says, for one task, which source columns each written column came from. Across
DAGs the same dataset (``namespace`` + ``name``, the names OpenLineage events and Airflow assets
carry) is written by one task and read by others, so joining the documents there answers the
questions asked of a column rather than of a run: where does it come from, end to end, and what
breaks if it changes. Standard library only: the UI's API, the CLI and the benchmark all build here.

Each task counts once, by its latest successful run (or its latest at a given time, ``as_of``):
what the pipeline does now, not every run it ever made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator

from airflow_lineage_provider.lineage.model import Dataset, LineageReport
from airflow_lineage_provider.lineage.naming import identity_keys

UPSTREAM = "upstream"
DOWNSTREAM = "downstream"
UNWRITTEN = ("no task with column lineage writes it: a task without capture, or a load from outside "
             "Airflow, may")


@dataclass(frozen=True, order=True)
class TaskRun:
    """A successful task instance whose lineage document the trace reads.

    ``ended``: when it ended, ISO 8601 in UTC (``2026-11-27T05:00:00+00:00``); runs of a task compare
    by it, so every producer writes it the same way.
    """

    ended: str
    dag_id: str
    task_id: str
    run_id: str
    map_index: int = -1

    @property
    def task(self) -> tuple[str, str, int]:
        return self.dag_id, self.task_id, self.map_index

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"dag_id": self.dag_id, "task_id": self.task_id, "run_id": self.run_id,
                                  "ended": self.ended}
        if self.map_index >= 0:
            out["map_index"] = self.map_index
        return out


@dataclass(frozen=True)
class Field:
    """A column of a dataset; ``column`` ``""`` is the whole dataset (a statement's indirect inputs
    act on every column it writes). ``label``: what a person calls the dataset (its table name).

    ``key`` and ``dataset`` are made once with the field (not compared): an index of 10,000 task runs
    and a trace across 1,000 DAGs ask them hundreds of thousands of times."""

    namespace: str
    name: str
    column: str = ""
    label: str = ""
    # Spark compares column names case-insensitively: `Birthday` written is `birthday` read.
    key: tuple[str, str, str] = field(init=False, repr=False, compare=False)
    dataset: tuple[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset", (self.namespace, self.name))
        object.__setattr__(self, "key", (self.namespace, self.name, self.column.lower()))

    def to_dict(self) -> dict[str, str]:
        return {"namespace": self.namespace, "name": self.name, "label": self.label or self.name,
                "column": self.column}


@dataclass(frozen=True)
class Hop:
    """One step of a trace: ``run`` wrote ``target`` from ``source`` in its statement ``statement``.

    ``depth`` counts steps from the start, each way. ``indirect``: the source decided which rows or
    groups the target got (a filter, join or group key) rather than a value; its target is the
    whole dataset. ``stale``: why the data the reading run saw may be older than the pipeline's
    (``""``: it is not).
    """

    direction: str
    depth: int
    target: Field
    source: Field
    subtype: str
    expression: str
    indirect: bool
    run: TaskRun
    statement: int
    stale: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"direction": self.direction, "depth": self.depth, "target": self.target.to_dict(),
                "source": self.source.to_dict(), "subtype": self.subtype, "expression": self.expression,
                "indirect": self.indirect, "run": self.run.to_dict(), "statement": self.statement,
                "stale": self.stale}


@dataclass(frozen=True)
class Hidden:
    """Hops of a DAG the asking user may not read: how many and where, never their columns or SQL.
    The trace does not go on through them (what lies beyond would show what they read)."""

    direction: str
    depth: int
    hops: int

    def to_dict(self) -> dict[str, object]:
        return {"direction": self.direction, "depth": self.depth, "hops": self.hops}


@dataclass(frozen=True)
class Source:
    """A dataset the trace reached upstream that no task with lineage writes, and why that matters."""

    dataset: Field
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"dataset": self.dataset.to_dict(), "reason": self.reason}


@dataclass(frozen=True)
class Trace:
    """Every hop from ``start`` each way asked, nearest first; what could not be shown, said."""

    start: Field
    hops: tuple[Hop, ...] = ()
    hidden: tuple[Hidden, ...] = ()
    sources: tuple[Source, ...] = ()
    found: bool = True  # False: no task with lineage writes or reads ``start``
    omitted: int = 0  # hops beyond ``shown_depth`` left out (``nearest``)
    shown_depth: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"start": self.start.to_dict(), "found": self.found, "hops": [h.to_dict() for h in self.hops],
                "hidden": [h.to_dict() for h in self.hidden], "sources": [s.to_dict() for s in self.sources],
                "omitted": self.omitted, "shown_depth": self.shown_depth}

    def nearest(self, limit: int) -> Trace:
        """The trace cut to its nearest whole depths holding at most ``limit`` hops (the first depth
        always), saying how many were left out: a browser cannot draw 60,000 hops, and a user asking
        for them wants the CSV. Unchanged when it holds no more."""
        if len(self.hops) <= limit:
            return self
        per_depth: dict[int, int] = {}
        for h in self.hops:
            per_depth[h.depth] = per_depth.get(h.depth, 0) + 1
        depth, total = 1, per_depth.get(1, 0)
        while depth + 1 in per_depth and total + per_depth[depth + 1] <= limit:
            depth += 1
            total += per_depth[depth]
        kept = tuple(h for h in self.hops if h.depth <= depth)
        reached = {h.source.dataset for h in kept}
        return Trace(start=self.start, hops=kept, hidden=tuple(g for g in self.hidden if g.depth <= depth),
                     sources=tuple(x for x in self.sources if x.dataset.dataset in reached), found=self.found,
                     omitted=len(self.hops) - len(kept), shown_depth=depth)

    def rows(self) -> list[dict[str, object]]:
        """One flat row per hop, hidden group and unwritten source (``kind``): the impact list as CSV."""
        out: list[dict[str, object]] = []
        for h in self.hops:
            out.append({"kind": "hop", "direction": h.direction, "depth": h.depth, "dag_id": h.run.dag_id,
                        "task_id": h.run.task_id, "run_id": h.run.run_id, "ended": h.run.ended,
                        "target": h.target.label or h.target.name, "target_column": h.target.column,
                        "source": h.source.label or h.source.name, "source_column": h.source.column,
                        "subtype": h.subtype, "indirect": h.indirect, "expression": h.expression, "note": h.stale})
        for g in self.hidden:
            out.append({**dict.fromkeys(ROW_FIELDS, ""), "kind": "hidden", "direction": g.direction, "depth": g.depth,
                        "note": f"{g.hops} hop(s) in DAGs you may not read"})
        for src in self.sources:
            out.append({**dict.fromkeys(ROW_FIELDS, ""), "kind": "source", "direction": UPSTREAM,
                        "source": src.dataset.label or src.dataset.name, "note": src.reason})
        return out

    def lines(self) -> list[str]:
        """The trace as a person reads it in a terminal: each way, nearest first."""
        out = [f"column lineage of {_named(self.start)} across DAGs"]
        if not self.found:
            return out + ["  no task with column lineage writes or reads it"]
        for direction in (UPSTREAM, DOWNSTREAM):
            hops = [h for h in self.hops if h.direction == direction]
            hidden = [g for g in self.hidden if g.direction == direction]
            if not hops and not hidden:
                continue
            out.append(f"{direction}:")
            for h in sorted(hops, key=lambda h: (h.depth, h.indirect, _named(h.target), _named(h.source))):
                arrow = "<-" if not h.indirect else "<- (indirect)"
                out.append(f"  {h.depth}  {_named(h.target) or '?'} {arrow} {_named(h.source)}  {h.subtype}  "
                           f"[{h.run.dag_id}.{h.run.task_id}, run {h.run.run_id}, {h.run.ended}]")
                if h.stale:
                    out.append(f"       stale: {h.stale}")
            out += [f"  {g.depth}  hidden: {g.hops} hop(s) in DAGs you may not read" for g in hidden]
        if self.omitted:
            out.append(f"{self.omitted} more hop(s) beyond depth {self.shown_depth} left out")
        if self.sources:
            out.append("sources without lineage:")
            out += [f"  {_named(s.dataset)}: {s.reason}" for s in self.sources]
        return out


ROW_FIELDS = ("kind", "direction", "depth", "dag_id", "task_id", "run_id", "ended", "target", "target_column",
              "source", "source_column", "subtype", "indirect", "expression", "note")


def _named(f: Field) -> str:
    name = f.label or f.name
    return f"{name}.{f.column}" if f.column else name


def moment(value: Any) -> str:
    """A time as the trace compares times: ISO 8601 in UTC to the microsecond (text that sorts as time
    does). A date, or a time without a zone, is taken in UTC: ``2026-11-26`` is its first moment."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class TraceQuery:
    """A trace as a user asks for it (CLI flags, API parameters), checked once for both doors."""

    start: str
    column: str | None = None
    upstream: bool = True
    downstream: bool = True
    depth: int | None = None
    as_of: str | None = None

    @classmethod
    def parse(cls, start: str, *, column: str | None = None, depth: str | int | None = "all",
              as_of: str | None = None, upstream: bool = True, downstream: bool = True) -> TraceQuery:
        """``ValueError`` saying what is wrong with a parameter."""
        if not start or not start.strip():
            raise ValueError("name a dataset: db.table.column, db.table, or a path with a column")
        steps: int | None
        if depth is None or str(depth).strip().lower() in ("", "all"):
            steps = None
        else:
            try:
                steps = int(str(depth).strip())
            except ValueError:
                raise ValueError(f"depth {str(depth)[:20]!r} is not a number of steps or 'all'") from None
            if steps < 1:
                raise ValueError(f"depth {steps}: a trace takes at least 1 step each way ('all': every step)")
        when = None
        if as_of:
            try:
                when = moment(as_of)
            except ValueError:
                raise ValueError(f"as of {as_of[:40]!r} is not a time: give ISO 8601, e.g. 2026-11-26 or "
                                 "2026-11-26T08:00:00+00:00") from None
        if not upstream and not downstream:
            raise ValueError("ask for upstream, downstream or both")
        return cls(start.strip(), column.strip() if column else None, upstream, downstream, steps, when)

    def run(self, index: TraceIndex, visible: Callable[[str], bool] | None = None,
            limit: int | None = None) -> Trace | str:
        """The trace (``limit``: its nearest hops, ``Trace.nearest``), or a sentence saying why there is
        none (an unknown or ambiguous start). A start no DAG ``visible`` allows touches is unknown: the
        same sentence, never a hint that it exists."""
        found = index.starts(self.start, self.column, visible=visible)
        if not found:
            what = f"{self.start} (column {self.column})" if self.column else self.start
            return f"no task with column lineage writes or reads {what}"
        if len(found) > 1:
            names = ", ".join(sorted(f"{f.namespace}/{f.name}" for f in found))
            return f"{self.start} names {len(found)} datasets ({names}): give the path or the full table name"
        return index.trace(found[0], upstream=self.upstream, downstream=self.downstream, depth=self.depth,
                           as_of=self.as_of, visible=visible, limit=limit)


# -- one run's edges, read once ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Edge:
    target: Field
    source: Field
    subtype: str
    expression: str
    indirect: bool
    statement: int


@dataclass(frozen=True)
class _Run:
    run: TaskRun
    edges: tuple[_Edge, ...]
    written: tuple[Field, ...]  # datasets (column "")
    read: tuple[Field, ...]
    datasets: tuple[Dataset, ...]  # as the document names them, for ``_Same``


def _field(d: Dataset, column: str = "") -> Field:
    return Field(d.namespace, d.name, column, d.table or d.name)


def read_run(run: TaskRun, report: LineageReport) -> _Run:
    """A run's document as edges between dataset columns: each input named by its dataset."""
    edges: list[_Edge] = []
    written: dict[tuple[str, str], Field] = {}
    read: dict[tuple[str, str], Field] = {}
    named: dict[Dataset, None] = {}
    for st in report.statements:
        if st.method == "none":
            continue
        by_label = {d.label: d for d in st.inputs}
        for d in st.inputs:
            read.setdefault((d.namespace, d.name), _field(d))
            named[d] = None
        if st.target is None:  # a bare query writes nothing another task could read
            continue
        target = st.target
        named[target] = None
        written.setdefault((target.namespace, target.name), _field(target))
        for column, inputs in st.columns:
            into = _field(target, column)
            for i in inputs:
                d = by_label.get(i.table) or Dataset(namespace="", name=i.table, table=i.table)
                edges.append(_Edge(into, _field(d, i.field), i.subtype, i.expression, False, st.index))
        whole = _field(target)
        for i in st.indirect:
            d = by_label.get(i.table) or Dataset(namespace="", name=i.table, table=i.table)
            edges.append(_Edge(whole, _field(d, i.field), i.subtype, "", True, st.index))
    return _Run(run, tuple(edges), tuple(written.values()), tuple(read.values()), tuple(named))


class _Same:
    """Which datasets are one (``naming.identity_keys``: a catalog table and its location), merged as runs
    name them: a task whose lineage names a table by location joins one that names it by catalog name."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}
        self._members: dict[str, set[tuple[str, str]]] = {}
        # ``of`` answered, per dataset: a trace asks it several times a hop (60,000 hops across 1,000
        # DAGs); any ``note`` may merge, so it forgets them.
        self._of: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self.version = 0  # counts new datasets and merges: what is built from the names is built again

    def _find(self, key: str) -> str:
        parent = self._parent
        parent.setdefault(key, key)
        root = key
        while parent[root] != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    def note(self, d: Dataset) -> None:
        ident = (d.namespace, d.name)
        keys = [_location(ident), *identity_keys(d)]
        if keys[0] not in self._parent:
            self.version += 1  # a dataset not seen before
        root = self._find(keys[0])
        members = self._members.setdefault(root, {ident})
        changed = ident not in members
        members.add(ident)
        for k in keys[1:]:
            other = self._find(k)
            if other != root:
                self._parent[other] = root
                joined = self._members.pop(other, set())
                changed = changed or not joined <= members
                members |= joined
        if changed:  # a name joined a dataset: what ``of`` answered may be wrong now
            self._of = {}
            self.version += 1

    def of(self, ident: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        """Every name of ``ident``'s dataset, sorted (the first is the one a trace shows)."""
        known = self._of.get(ident)
        if known is None:
            key = _location(ident)
            members = self._members.get(self._find(key)) if key in self._parent else None
            known = self._of[ident] = tuple(sorted(members)) if members else (ident,)
        return known


def _location(ident: tuple[str, str]) -> str:
    return f"location:{ident[0]}|{ident[1]}"


# -- the index ------------------------------------------------------------------------------------------------


@dataclass
class _View:
    """The adjacency of the runs that count at one time: each task's latest successful run."""

    up: dict[tuple[str, str, str], list[tuple[_Edge, _Run]]] = field(default_factory=dict)
    down: dict[tuple[str, str, str], list[tuple[_Edge, _Run]]] = field(default_factory=dict)
    up_indirect: dict[tuple[str, str], list[tuple[_Edge, _Run]]] = field(default_factory=dict)
    down_indirect: dict[tuple[str, str, str], list[tuple[_Edge, _Run]]] = field(default_factory=dict)
    writers: dict[tuple[str, str], list[_Run]] = field(default_factory=dict)
    columns: dict[tuple[str, str], dict[str, Field]] = field(default_factory=dict)
    # Each dataset as each run names it (column ""): whom a start may be shown to, and under which name.
    named: dict[tuple[str, str], list[tuple[Field, _Run]]] = field(default_factory=dict)

    def add(self, r: _Run) -> None:
        for d in r.written:
            self.writers.setdefault(d.dataset, []).append(r)
        for d in _touched(r):
            self.named.setdefault(d.dataset, []).append((d, r))
        for e in r.edges:
            if e.indirect:
                self.up_indirect.setdefault(e.target.dataset, []).append((e, r))
                self.down_indirect.setdefault(e.source.key, []).append((e, r))
            else:
                self.up.setdefault(e.target.key, []).append((e, r))
                self.down.setdefault(e.source.key, []).append((e, r))
                self.columns.setdefault(e.target.dataset, {}).setdefault(e.target.key[2], e.target)
            self.columns.setdefault(e.source.dataset, {}).setdefault(e.source.key[2], e.source)

    def remove(self, r: _Run) -> None:
        for d in r.written:
            _drop(self.writers, d.dataset, r)
        for d in _touched(r):
            _drop(self.named, d.dataset, r)
        for e in r.edges:
            if e.indirect:
                _drop(self.up_indirect, e.target.dataset, r)
                _drop(self.down_indirect, e.source.key, r)
            else:
                _drop(self.up, e.target.key, r)
                _drop(self.down, e.source.key, r)
        # ``columns`` keeps names once seen: they are only offered to search and start from.


def _touched(r: _Run) -> Iterator[Field]:
    """Every dataset ``r`` writes or reads, once, as it names it (column ``""``)."""
    seen: set[tuple[str, str]] = set()
    for f in (*r.written, *r.read, *(e.target for e in r.edges), *(e.source for e in r.edges)):
        if f.dataset not in seen:
            seen.add(f.dataset)
            yield _whole(f)


def _names(d: Field) -> Iterator[str]:
    """What a user may call a dataset, lower case: its label and the label's tails (``db.t``, ``t``), its
    name (a path), and ``namespace/name``."""
    label = d.label.lower()
    parts = label.split(".")
    return iter(dict.fromkeys((label, d.name.lower(), f"{d.namespace}/{d.name}".lower(),
                               *(".".join(parts[i:]) for i in range(1, len(parts))))))


def unquoted(text: str) -> str:
    """A name as Spark quotes it (`` `db`.`t`.`c` ``, a backtick doubled inside) in plain parts: ``db.t.c``.
    Text with no backtick, a path among it, is left as is."""
    if "`" not in text:
        return text
    out, quoted, i = [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == "`" and quoted and text[i + 1:i + 2] == "`":
            out.append("`")
            i += 1
        elif ch == "`":
            quoted = not quoted
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _drop(index: dict, key: object, run: _Run) -> None:
    """Take ``run``'s entries out of ``index[key]`` (by identity: two runs may hold equal edges)."""
    items = index.get(key)
    if items is None:
        return
    items[:] = [x for x in items if (x[1] if type(x) is tuple else x) is not run]
    if not items:
        del index[key]


class TraceIndex:
    """Every task run's lineage, kept so that a trace costs what it reaches, not what is stored.

    ``add`` each successful run as it is found (any order); the current view (each task's latest
    run) is kept up to date as runs arrive. ``as_of`` builds the view of that time from the runs
    kept.

    ``history=False`` keeps a task's latest run and only the time of the one before (what the stale
    rule asks): memory then grows with the tasks, not with their runs, and a trace ``as_of`` an
    earlier time needs an index built from the runs of that time (``runs.TraceFollower.index_at``).
    """

    def __init__(self, *, history: bool = True) -> None:
        self._history = history
        self._runs: dict[tuple[str, str, int], list[_Run]] = {}
        self._now = _View()
        self._same = _Same()
        # ``find``'s lookup and when it was built: built again when first asked after a run brings a
        # dataset new to the names or to the view (a task running again on the same tables does not).
        self._names: tuple[tuple[int, int], dict[str, list[Field]]] | None = None
        self._new_in_view = 0

    def __len__(self) -> int:
        return sum(len(v) for v in self._runs.values())

    def add(self, run: TaskRun, report: LineageReport) -> None:
        """Keep a successful run's lineage; it replaces the task's latest run when it ended later."""
        r = read_run(run, report)
        for d in r.datasets:
            self._same.note(d)
        runs = self._runs.setdefault(run.task, [])
        latest = runs[-1] if runs else None
        if latest is not None and latest.edges == r.edges and latest.written == r.written and latest.read == r.read:
            # Most runs of a task repeat its lineage: its runs share one copy, so memory grows with
            # the changes a pipeline makes, not with the runs kept.
            r = _Run(run, latest.edges, latest.written, latest.read, latest.datasets)
        # A run cleared and run again succeeds again: its new document replaces the old one.
        runs[:] = [x for x in runs if x.run.run_id != run.run_id]
        runs.append(r)
        runs.sort(key=lambda x: x.run.ended)
        if not self._history and len(runs) > 1:
            runs[:-1] = [_Run(runs[-2].run, (), (), (), ())]  # the run before: its time, for ``_previous``
        if runs[-1] is not latest:
            if latest is not None:
                self._now.remove(latest)
            now = self._now
            if any(f.dataset not in now.columns and f.dataset not in now.writers
                   for f in (*runs[-1].written, *runs[-1].read)):
                self._new_in_view += 1  # ``find`` offers it once built again
            now.add(runs[-1])

    # -- one dataset under its several names ------------------------------------------------------------

    def _one(self, ident: tuple[str, str]) -> tuple[str, str]:
        """The name a dataset is known by in a trace, whichever of its names a run used."""
        return self._same.of(ident)[0]

    def _key(self, f: Field) -> tuple[str, str, str]:
        names = self._same.of(f.dataset)
        return f.key if len(names) == 1 else (*names[0], f.key[2])

    def _column_steps(self, index: dict, f: Field) -> list:
        col = f.key[2]
        return [x for ident in self._same.of(f.dataset) for x in index.get((ident[0], ident[1], col), ())]

    def _dataset_steps(self, index: dict, ident: tuple[str, str]) -> list:
        return [x for same in self._same.of(ident) for x in index.get(same, ())]

    def _columns_of(self, view: _View, ident: tuple[str, str]) -> dict[str, Field]:
        out: dict[str, Field] = {}
        for same in self._same.of(ident):
            for name, f in view.columns.get(same, {}).items():
                out.setdefault(name, f)
        return out

    def datasets(self) -> Iterator[Field]:
        """Every dataset a counted run wrote or read (column ``""``), once under its several names."""
        seen: set[tuple[str, str]] = set()
        for key, columns in self._now.columns.items():
            one = self._one(key)
            if one not in seen:
                seen.add(one)
                first = next(iter(columns.values()))
                yield Field(key[0], key[1], "", first.label)
        for key, writers in self._now.writers.items():
            one = self._one(key)
            if one not in seen:  # written with no column from a source (literals only)
                seen.add(one)
                yield next(d for d in writers[0].written if d.dataset == key)

    def columns(self, namespace: str, name: str) -> list[Field]:
        return sorted(self._columns_of(self._now, (namespace, name)).values(), key=lambda f: f.column.lower())

    def find(self, text: str) -> list[Field]:
        """Datasets whose label or name is ``text`` (a table name: ``db.t`` or ``spark_catalog.db.t``; a path)."""
        built_at = (self._same.version, self._new_in_view)
        if self._names is None or self._names[0] != built_at:
            names: dict[str, list[Field]] = {}  # every name a dataset answers to, once (10,000 datasets: 0.1 s)
            for d in self.datasets():
                # The names each run gives it too: one task's location finds the table another names.
                given = (f for same in self._same.of(d.dataset) for f, _ in self._now.named.get(same, ()))
                for key in dict.fromkeys(k for f in (d, *given) for k in _names(f)):
                    names.setdefault(key, []).append(d)
            self._names = (built_at, names)
        names = self._names[1]
        return list(names.get(text.strip().lower(), ()))

    def starts(self, text: str, column: str | None = None, *,
               visible: Callable[[str], bool] | None = None) -> list[Field]:
        """What ``text`` names: ``db.table.column`` (a column), ``db.table`` or a path (a whole dataset),
        quoted as Spark quotes names or not; ``column`` given apart names a column of a path. Several
        when the name is ambiguous, none when no counted run wrote or read it.

        ``visible(dag_id)``: only what runs of the DAGs it allows name, under their names (a hidden
        DAG's location or column spelling is never the answer); a dataset they do not touch, or touch
        under other names than ``text``, is not there."""
        text = unquoted(text.strip()).strip()
        column = unquoted(column.strip()) if column else None
        if column is None:
            whole = self._seen(self.find(text), text, visible)
            if whole:
                return whole
            if "." not in text:
                return []
            text, column = text.rsplit(".", 1)
        found = []
        for d in self._seen(self.find(text), text, visible):
            found.append(Field(d.namespace, d.name, self._column_named(d, column, visible), d.label))
        return found

    def _seen(self, found: list[Field], text: str, visible: Callable[[str], bool] | None) -> list[Field]:
        """``found`` as runs of ``visible`` DAGs name each dataset under ``text``; the rest left out."""
        if visible is None:
            return found
        want, out = text.lower(), []
        for d in found:
            shown = next((f for same in self._same.of(d.dataset) for f, r in self._now.named.get(same, ())
                          if visible(r.run.dag_id) and want in _names(f)), None)
            if shown is not None:
                out.append(shown)
        return out

    def _column_named(self, d: Field, column: str, visible: Callable[[str], bool] | None) -> str:
        """``column`` of ``d`` spelled as a run names it (of a ``visible`` DAG), else as given."""
        if visible is None:
            named = self._columns_of(self._now, d.dataset).get(column.lower())
            return named.column if named else column
        f = Field(d.namespace, d.name, column)
        view = self._now
        for steps, end in ((view.up, 0), (view.down, 1), (view.down_indirect, 1)):
            for e, r in self._column_steps(steps, f):
                if visible(r.run.dag_id):
                    return (e.target, e.source)[end].column
        return column

    def search(self, text: str, *, visible: Callable[[str], bool] | None = None, limit: int = 50) -> list[Field]:
        """Datasets and columns whose name holds ``text`` (case aside), from the latest runs of the DAGs
        ``visible`` allows: what a user may start a trace from, never a column only a hidden DAG names."""
        want = text.strip().lower()
        if not want:
            return []
        can_see = visible or (lambda _dag: True)
        found: dict[tuple[str, str, str], Field] = {}
        for runs in self._runs.values():
            r = runs[-1]
            if not can_see(r.run.dag_id):
                continue
            for f in (*r.written, *r.read, *(e.target for e in r.edges), *(e.source for e in r.edges)):
                label = (f.label or f.name).lower()
                if want in label or (f.column and want in f"{label}.{f.column.lower()}"):
                    found.setdefault(self._key(f), f)
        # Whole datasets first, then columns, each by name: the user picks among few.
        return sorted(found.values(), key=lambda f: (bool(f.column), f.label or f.name, f.column.lower()))[:limit]

    def note_run(self, run: TaskRun) -> None:
        """Know that a task succeeded at ``run.ended`` without its lineage: the run before its latest
        (``history=False`` asks no more), so that the stale rule can compare with it."""
        runs = self._runs.setdefault(run.task, [])
        if runs and runs[-1].run.ended <= run.ended:
            raise ValueError(f"{run.dag_id}.{run.task_id}: a run noted without lineage must be older than its latest")
        runs.insert(0, _Run(run, (), (), (), ()))
        runs.sort(key=lambda x: x.run.ended)
        if not self._history:
            del runs[:-2]

    def _view(self, as_of: str | None) -> _View:
        if as_of is None:
            return self._now
        if not self._history:
            later = [r.run for runs in self._runs.values() for r in runs[-1:] if r.run.ended > as_of]
            if later:  # only the latest runs are kept: the view of an earlier time is not here
                raise ValueError(f"this index keeps each task's latest run only, and {later[0].dag_id}."
                                 f"{later[0].task_id}'s ended after {as_of}: build one as of that time")
            return self._now
        view = _View()
        for runs in self._runs.values():
            then = [r for r in runs if r.run.ended <= as_of]
            if then:
                view.add(then[-1])
        return view

    def _previous(self, run: TaskRun) -> TaskRun | None:
        runs = self._runs.get(run.task, [])
        earlier = [r.run for r in runs if r.run.ended < run.ended]
        return earlier[-1] if earlier else None

    def trace(self, start: Field, *, upstream: bool = True, downstream: bool = True, depth: int | None = None,
              as_of: str | None = None, visible: Callable[[str], bool] | None = None,
              limit: int | None = None) -> Trace:
        """Hops from ``start`` (a column, or a whole dataset with column ``""``), each way asked, up
        to ``depth`` steps (``None``: all). ``visible(dag_id)``: whether the asking user may read a
        DAG; hops of the others are counted as hidden and not followed. A cycle (a table that feeds
        itself over runs) ends where a column comes back. ``limit``: the answer is ``nearest(limit)``,
        and hops beyond the depths it can keep are only counted, not built (depth all over 1,000
        DAGs is 60,000 hops, of which a page shows 2,500)."""
        view = self._view(as_of)
        starts = [start] if start.column else list(self._columns_of(view, start.dataset).values())
        walk = _Walk(self, view, visible or (lambda _dag: True), depth, limit)
        # Found only through a DAG the user may read: else the answer is an unknown start's, and no
        # hidden count says that something lies there.
        if not any(walk.sees(r.run.dag_id) for f in starts for steps in (
                self._column_steps(view.up, f), self._column_steps(view.down, f),
                self._column_steps(view.down_indirect, f), self._dataset_steps(view.up_indirect, f.dataset))
                for _, r in steps):
            return Trace(start=start, found=False)
        if upstream:
            walk.run(starts, UPSTREAM)
        if downstream:
            walk.run(starts, DOWNSTREAM)
        whole = Trace(start=start, hops=tuple(walk.hops), hidden=tuple(walk.hidden),
                      sources=tuple(walk.sources.values()))
        if limit is None:
            return whole
        cut = whole.nearest(limit)  # it cuts whenever anything was only counted
        return replace(cut, omitted=cut.omitted + walk.counted) if walk.counted else cut

    def _stale(self, view: _View, reader: _Run, source: Field, can_see: Callable[[str], bool]) -> str:
        """Why ``reader`` may have read ``source`` old: every task that writes it last succeeded before
        the reader's previous successful run, so the reader has run again on data no one refreshed.
        A writer in a DAG the user may not read is not named."""
        writers = self._dataset_steps(view.writers, source.dataset)
        if not writers:
            return ""
        before = self._previous(reader.run)
        if before is None:
            return ""
        latest = max(w.run for w in writers)
        if latest.ended < before.ended:
            writer = f"{latest.dag_id}.{latest.task_id}" if can_see(latest.dag_id) else "a DAG you may not read"
            return (f"{writer} last wrote {source.label or source.name} at {latest.ended}, "
                    f"before {reader.run.dag_id}.{reader.run.task_id}'s previous successful run ({before.ended})")
        return ""


class _Walk:
    """One trace's breadth-first walks, each way, with what they look up once remembered: a depth-all
    trace across 1,000 DAGs meets the same datasets, readers and runs tens of thousands of times."""

    def __init__(self, index: TraceIndex, view: _View, can_see: Callable[[str], bool], depth: int | None,
                 limit: int | None) -> None:
        self.index, self.view, self.can_see, self.depth, self.limit = index, view, can_see, depth, limit
        self.hops: list[Hop] = []
        self.hidden: list[Hidden] = []
        self.sources: dict[tuple[str, str], Source] = {}
        self.counted = 0  # hops past the limit's depths, counted only
        self._stale: dict[tuple[int, tuple[str, str]], str] = {}
        self._written: dict[tuple[str, str], bool] = {}
        self._seeing: dict[str, bool] = {}

    def sees(self, dag_id: str) -> bool:
        known = self._seeing.get(dag_id)
        if known is None:
            known = self._seeing[dag_id] = bool(self.can_see(dag_id))
        return known

    def run(self, starts: Iterable[Field], direction: str) -> None:
        index, view, key = self.index, self.view, self.index._key
        upstream = direction == UPSTREAM
        seen = {key(f) for f in starts}
        frontier = list(starts)
        shown: set[tuple] = set()
        indirect_done: set[tuple[str, str]] = set()
        level, built = 1, 0
        while frontier and (self.depth is None or level <= self.depth):
            # Past the limit the answer is cut to shallower depths: what lies deeper is only counted.
            build = self.limit is None or built <= self.limit
            nxt_frontier: list[Field] = []
            blocked = 0  # one count a depth: never how many of the start's columns a hidden DAG touches
            for here in frontier:
                if upstream:
                    steps = index._column_steps(view.up, here)
                    one = index._one(here.dataset)
                    if one not in indirect_done:  # a dataset's indirect inputs, once per walk
                        indirect_done.add(one)
                        steps += index._dataset_steps(view.up_indirect, here.dataset)
                else:
                    steps = index._column_steps(view.down, here) + index._column_steps(view.down_indirect, here)
                for e, r in steps:
                    if not self.sees(r.run.dag_id):
                        blocked += 1
                        continue
                    # A view holds one run a task, so the run stands for its task.
                    ident = (key(e.target), key(e.source), e.indirect, e.statement, id(r))
                    if ident in shown:
                        continue
                    shown.add(ident)
                    if build:
                        built += 1
                        self.hops.append(Hop(direction, level, e.target, e.source, e.subtype, e.expression,
                                             e.indirect, r.run, e.statement, self.stale(r, e.source)))
                        if upstream and not self.written(e.source.dataset):
                            self.sources.setdefault(index._one(e.source.dataset), Source(_whole(e.source), UNWRITTEN))
                    else:
                        self.counted += 1
                    if e.indirect:
                        continue  # indirect inputs are shown apart, not followed
                    nxt = e.source if upstream else e.target
                    k = key(nxt)
                    if k not in seen:
                        seen.add(k)
                        nxt_frontier.append(nxt)
            if blocked and build:
                self.hidden.append(Hidden(direction, level, blocked))
            frontier, level = nxt_frontier, level + 1

    def written(self, dataset: tuple[str, str]) -> bool:
        known = self._written.get(dataset)
        if known is None:
            known = self._written[dataset] = bool(self.index._dataset_steps(self.view.writers, dataset))
        return known

    def stale(self, reader: _Run, source: Field) -> str:
        k = (id(reader), source.dataset)
        known = self._stale.get(k)
        if known is None:
            known = self._stale[k] = self.index._stale(self.view, reader, source, self.sees)
        return known


def _whole(f: Field) -> Field:
    return Field(f.namespace, f.name, "", f.label)
