"""One record per write out of Spark's events: the reader's reduction of a dump's records.

Spark reports one write several times, each a listener event of its own (``record.py``):

- CTAS: the CTAS ("command") and the insert it runs ("file source write");
- ``saveAsTable``: ``SaveAsV1TableCommand``, the CTAS (or insert) it runs, and that CTAS's insert;
- INSERT OVERWRITE DIRECTORY: the directory command and its insert, both "command".

A producer may dump every event; the reader keeps one record per write:

- a script statement's records: one per target (``one_per_statement``);
- an application's, and a SQL scripting block's (``"block"``), whose writes may land in one
  table twice: one per user action, by nesting execution ids (``one_per_action``); an
  application's kept writes are numbered 0..n-1 in dump order.

A record that is no event (no execution id: a dry run's analysis, a bare query's or a streaming
query's plan) is a write of its own: never nested, never merged with another; a statement or an application with no
event at all is kept as it is, as are the dumps written before ``raw/1``, which their producer
reduced already. Every rule reads only the keys a lean record keeps too (``lean_keys``), and
applying one twice changes nothing: the py4j capture drops events with these same functions
before it describes them (``toJSON`` costs tens of milliseconds), and the reader's pass then
leaves its records as they are.
"""

from __future__ import annotations

from typing import Any

from airflow_lineage_provider.lineage.naming import table_name
from airflow_lineage_provider.lineage.plan import record as raw
from airflow_lineage_provider.lineage.plan.writes import WRAPPER, WRITES, creates, rank

Record = dict[str, Any]

# Fields of a write command's JSON that name its catalog table.
_TARGET_FIELDS = ("catalogTable", "table", "tableDesc")
_NO_EVENT = -1  # below every execution id: a record that is no event never nests


def reduce(records: list[Record]) -> list[Record]:
    """The records of a dump, one per write: each script statement's on its own, an application's
    together. A dump with no event in it (written before ``raw/1``) comes back unchanged."""
    groups: dict[int | None, list[Record]] = {}
    for rec in records:
        groups.setdefault(rec.get(raw.STATEMENT), []).append(rec)
    out: list[Record] = []
    for statement, group in groups.items():
        if not any(raw.is_event(r) for r in group):
            out += group
        elif statement is None:  # an application's
            kept = one_per_action(group)
            out += [r if r.get(raw.INDEX) == i else {**r, raw.INDEX: i} for i, r in enumerate(kept)]
        elif len(group) == 1:
            out += group
        elif group[0].get(raw.BLOCK):
            out += one_per_action(group)
        else:
            out += one_per_statement(group)
    return out


def one_per_statement(records: list[Record]) -> list[Record]:
    """One script statement's records, one per target."""
    return one_per_target(drop_inner(records))


def drop_inner(records: list[Record]) -> list[Record]:
    """A statement's events less the ones another of its events stands for: what a creating
    command (CTAS, INSERT OVERWRITE DIRECTORY) run on its own runs inside it (a later execution id,
    or a funcName other than "command"), and a wrapper
    (``saveAsTable``) of other events. Reads only an event's head (``record.event``)."""
    events = [r for r in records if raw.is_event(r)]
    creators = [int(r[raw.EXECUTION_ID]) for r in events
                if r.get(raw.FUNC) == raw.COMMAND_FUNC and creates(raw.command(r))]
    created = min(creators) if creators else None
    wrapped = len(events) > 1

    def inner(r: Record) -> bool:
        if not raw.is_event(r):
            return False
        # A statement is one command: what ran after the creating command got its id ran inside it, the
        # insert of a data source CTAS ("file source write") as that of a Hive CTAS (a "command" of its own).
        if created is not None and (r.get(raw.FUNC) != raw.COMMAND_FUNC or int(r[raw.EXECUTION_ID]) > created):
            return True
        command = WRITES.get(raw.command(r))
        return wrapped and command is not None and command.family == WRAPPER

    return [r for r in records if not inner(r)]


def one_per_target(records: list[Record]) -> list[Record]:
    """One record per place written, in the order the places first appear: of one place's
    events the lowest rank wins (the CTAS over the insert it runs), the first on a tie."""
    best: dict[str, Record] = {}
    order: list[str] = []
    for rec in records:
        key = target_key(rec) if raw.is_event(rec) else None
        if key is None:  # nowhere known, or no event: never the same write as another record
            key = f"#{id(rec)}"
        if key not in best:
            order.append(key)
            best[key] = rec
        elif rank(raw.command(rec)) < rank(raw.command(best[key])):
            best[key] = rec
    return [best[k] for k in order]


def one_per_action(records: list[Record]) -> list[Record]:
    """One record per user action, from events in the order the listener received them.

    A command that runs other commands (``saveAsTable`` runs a CTAS, which runs an insert) gets
    its execution id first and reports last, so the events that arrived before it with a larger
    id ran inside it. Of such a nest, the lowest ``writes.rank`` is kept (the CTAS over its insert,
    anything over ``SaveAsV1TableCommand``), the outermost on a tie, in the nest's last place.
    """
    kept: list[tuple[int, Record]] = []
    for rec in records:
        qid = rec.get(raw.EXECUTION_ID)
        if qid is None:  # no event: nothing ran inside it, and it ran inside nothing
            kept.append((_NO_EVENT, rec))
            continue
        inner = [k for k in kept if k[0] > qid]
        if inner:
            kept = [k for k in kept if k[0] <= qid]
            nest = [(qid, rec)] + sorted(inner, key=lambda k: k[0])
            kept.append(min(nest, key=lambda k: rank(raw.command(k[1]))))  # min keeps the first on ties
        else:
            kept.append((qid, rec))
    return [rec for _, rec in kept]


def target_key(rec: Record) -> str | None:
    """Where a write lands: its location when known (a CTAS and the insert it runs share it),
    else its catalog table; ``None`` when neither is known."""
    found = rec.get(raw.TARGET_KEY)
    if found is not None:
        return str(found)
    extras, command = raw.extras_of(rec), raw.command(rec)
    where = raw.write_location(extras, command, raw.PATH) or raw.write_location(extras, command, raw.LOCATION)
    if where:
        # One directory, however it is spelled: INSERT OVERWRITE DIRECTORY names ``file:/x`` (its
        # storage URI, percent-encoded), the file insert it runs ``file:///x`` or ``/x`` (as written);
        # a CTAS names the catalog's URI, its insert the path as written. All are read as written.
        where = str(where).rstrip("/")
        return "/" + where[len("file:"):].lstrip("/") if where.startswith("file:") else where
    plan = rec.get(raw.PLAN)
    root = plan[0] if plan else {}
    for fname in _TARGET_FIELDS:
        meta = root.get(fname)
        if isinstance(meta, dict) and isinstance(meta.get("identifier"), dict):
            return table_name(meta["identifier"]) or ""
    return None


def lean_keys(rec: Record) -> Record:
    """What the rules read of a raw event that its lean form could not work out again (it has no
    plan and no extras): the digest keeps these in the lean record."""
    if not raw.is_event(rec):
        return {}
    out: Record = {raw.COMMAND: raw.command(rec)}
    key = target_key(rec)
    if key is not None:
        out[raw.TARGET_KEY] = key
    return out
