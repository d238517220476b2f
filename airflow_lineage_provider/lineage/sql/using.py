"""A ``*`` over a USING / NATURAL join followed by another join: the later relations' columns named as a key.

``SELECT * FROM a JOIN b USING (k) JOIN c ON ..``: Spark's star is the USING join's output (``k`` once,
then the other columns of ``a`` and ``b``) followed by every column of ``c``, its own ``k`` too.
sqlglot's star expansion leaves out every column named as a USING key after the first, ``c.k`` with
them. The relations joined after the USING join, and their columns named as a key, are noted before
qualify; once the star is expanded, each such column left out is put back in its place among its
relation's columns.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

# (select, [(relation's name, its columns in order, those named as a key)]) of each select concerned.
Missing = list[tuple[exp.Select, list[tuple[str, list[str], set[str]]]]]


def later_keys(query: exp.Expression, using: dict[int, str], schema: Any) -> Missing:
    """The selects of ``query`` that join with USING / NATURAL (``using``: by their ids) and then join
    other relations under an unqualified ``*``, with those relations' columns named as a key."""
    found: Missing = []
    for select in query.find_all(exp.Select):
        if id(select) not in using or not any(isinstance(p, exp.Star) for p in select.expressions):
            continue
        keys: set[str] = set()
        relations = _relations(select)
        seen: list[str] = _columns(relations[0], schema) if relations else []
        later: list[tuple[str, list[str], set[str]]] = []
        for join in select.args.get("joins") or []:
            columns = _columns(join.this, schema)
            if join.args.get("using"):
                keys.update(i.name.lower() for i in join.args["using"])
            elif str(join.args.get("method") or "").upper() == "NATURAL":
                keys.update(c for c in columns if c in seen)
            elif keys:
                named = {c for c in columns if c in keys}
                if named and join.this.alias_or_name:
                    later.append((join.this.alias_or_name, columns, named))
            seen.extend(columns)
        if later:
            found.append((select, later))
    return found


def put_back(missing: Missing) -> None:
    """Put each column of ``missing`` the star expansion left out back among its relation's columns."""
    for select, later in missing:
        names = [r.alias_or_name for r in _relations(select)]
        for name, columns, keys in later:
            projections = list(select.expressions)
            tables = [_table(p) for p in projections]
            if "*" in tables:
                continue  # the star was not expanded
            present = {p.alias_or_name.lower(): i for i, p in enumerate(projections) if tables[i] == name}
            earlier = set(names[:names.index(name)]) if name in names else set()
            changed = False
            for position, column in enumerate(columns):
                if column not in keys or column in present:
                    continue
                after = [present[c] for c in columns[:position] if c in present]
                before = [present[c] for c in columns[position + 1:] if c in present]
                if after or before:
                    at = max(after) + 1 if after else min(before)
                else:  # none of the relation's columns: after those of the relations before it
                    at = max((i + 1 for i, t in enumerate(tables) if t in earlier or t == ""), default=0)
                projections.insert(at, exp.alias_(exp.column(column, table=name), column))
                tables.insert(at, name)
                present = {k: (i + 1 if i >= at else i) for k, i in present.items()}
                present[column] = at
                changed = True
            if changed:
                select.set("expressions", projections)


def _table(projection: exp.Expression) -> str:
    """The relation a projection of an expanded star copies a column of (``""``: a USING key's coalesce,
    ``"*"``: a star left unexpanded)."""
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    if isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star)):
        return "*"
    return inner.table if isinstance(inner, exp.Column) else ""


def _relations(select: exp.Select) -> list[exp.Expression]:
    first = select.args.get("from_")
    return ([first.this] if first is not None else []) + [j.this for j in select.args.get("joins") or []]


def _columns(relation: exp.Expression | None, schema: Any) -> list[str]:
    """A relation's column names in order, in lower case, when known: a table's, a derived table's."""
    if isinstance(relation, exp.Table):
        try:
            return [c.lower() for c in schema.column_names(relation)]
        except Exception:  # noqa: BLE001 - a table of unknown columns: none known
            return []
    if isinstance(relation, exp.Subquery) and isinstance(relation.this, exp.Query):
        return [n.lower() for n in relation.this.named_selects]
    return []
