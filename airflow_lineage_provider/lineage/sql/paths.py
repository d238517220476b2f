"""Multi-part column names read as Spark reads them: the longest qualifier naming a relation first.

sqlglot reads ``a.b.c.d`` as catalog ``a``, database ``b``, table ``c``, column ``d``; Spark matches
the name's longest prefix that qualifies a relation in scope (``catalog.db.table``, ``db.table``,
then ``table`` or an alias), and reads the rest as a column and its struct fields: ``db.t.col.field``
is field ``field`` of column ``col``, and ``t.t.f`` of a table ``t`` with a struct column ``t`` is
field ``f`` of that column. sqlglot's reading made an unknown column of the one and the wrong column
of the other. Each such name is written here as the column of its relation and a ``Dot`` per field,
the form sqlglot's qualify and the resolver read as a struct path.
"""

from __future__ import annotations

import re

from sqlglot import exp

# A name between two dots (``a.b.c``, backquoted or not): the only text a name of three or more parts can
# be written in; most statements have none, and then the tree is not walked. (A pattern that starts with
# the dot is searched ten times faster than one that starts with a name.)
_THREE_PARTS = re.compile(r"\.\s*[\w`]+\s*\.")


def read_struct_paths(query: exp.Expression, text: str) -> bool:
    """Write each column name of three or more parts whose qualifier Spark matches otherwise than sqlglot
    as that relation's column and its fields. ``query``: its tables qualified (catalog and database);
    ``text``: the statement's text. Returns whether any was rewritten."""
    if not _THREE_PARTS.search(text):
        return False
    changed = False
    for column in list(query.find_all(exp.Column)):
        if column.args.get("db") is None:
            continue
        parts = column.parts
        found = _qualifier(column, [p.name for p in parts])
        if found is None:
            continue
        size, relation = found
        if size == len(parts) - 1:
            continue  # ``db.t.c``: sqlglot reads it so
        rest = parts[size:]
        base: exp.Expression = exp.Column(this=rest[0].copy(), table=exp.to_identifier(relation))
        for part in rest[1:]:
            base = exp.Dot(this=base, expression=part.copy())
        column.replace(base)
        changed = True
    return changed


def _qualifier(column: exp.Column, names: list[str]) -> tuple[int, str] | None:
    """(how many leading parts qualify a relation, that relation's name in its query) of a column
    written with ``names``, in the innermost query that has one, or ``None``."""
    select = column.find_ancestor(exp.Select)
    while select is not None:
        relations = _relations(select)
        for size in (3, 2, 1):
            if size < len(names):
                relation = relations.get(tuple(names[:size]))
                if relation is not None:
                    return size, relation
        select = select.find_ancestor(exp.Select)
    return None


def _relations(select: exp.Select) -> dict[tuple[str, ...], str]:
    """The qualifiers of the relations of a select's FROM and joins (``(catalog, db, table)``, ``(db,
    table)``, ``(name or alias,)``), each to the name that relation has in the query."""
    found: dict[tuple[str, ...], str] = {}
    sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
    for source in sources:
        relation = source.this if source is not None else None
        if relation is None:
            continue
        name = relation.alias_or_name
        if not name:
            continue
        if isinstance(relation, exp.Table):
            if relation.catalog and relation.db:
                found.setdefault((relation.catalog, relation.db, relation.name), name)
            if relation.db:
                found.setdefault((relation.db, relation.name), name)
        found.setdefault((name,), name)
    return found
