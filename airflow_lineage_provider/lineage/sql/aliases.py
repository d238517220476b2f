"""Spark's name of an unnamed column that reads a lateral column alias: ``lateralAliasReference(a)``.

``SELECT salary AS s, s * 2 FROM t``: Spark names the second column ``(lateralAliasReference(s) * 2)``,
as it names the expression before it resolves the alias. sqlglot's qualify writes the alias's
expression in place of the reference (``(salary * 2)``), so the name is given here, before qualify:
such a column gets an alias of that name. A name a relation of the select has as a column is that
column (Spark resolves the relation's columns first), not the alias.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from airflow_lineage_provider.lineage.sql.keywords import relation_columns
from airflow_lineage_provider.lineage.sql.render import spark_name

# An alias followed by a comma: a later column of the same select list may read it.
# (Searched in the lower-cased text, with no word boundary: a tenth of the cost; ``alias x,`` matching too
# costs only the check that follows.)
_ALIAS = re.compile(r"as\s+`?([a-z_]\w*)`?\s*,")
_WORD = re.compile(r"\w+")


def name_lateral_references(query: exp.Expression, sql: str, text: str, schema: Any, names: dict[str, str]) -> bool:
    """Give each unnamed column that reads an alias of an earlier column of its select list the name Spark
    gives it; ``names``: the statement's output names as written, which it joins. ``sql``: the statement;
    ``text``: it lower-cased. Returns whether any was named."""
    if not _reads_an_alias(text):
        return False
    changed = False
    for select in query.find_all(exp.Select):
        aliases: set[str] = set()
        columns: set[str] | None = None
        for p in list(select.expressions):
            if isinstance(p, exp.Alias):
                aliases.add(p.alias.lower())
                continue
            if not aliases or isinstance(p, (exp.Column, exp.Star)):
                continue
            references = [c for c in p.find_all(exp.Column) if not c.table and c.name.lower() in aliases
                          and c.find_ancestor(exp.Select) is select]
            if not references:
                continue
            if columns is None:
                columns = relation_columns(select, query, schema)
            references = [c for c in references if c.name.lower() not in columns]
            if not references:
                continue
            named = p.copy()
            for column in [c for c in named.find_all(exp.Column) if not c.table and c.name.lower() in aliases
                           and c.name.lower() not in columns]:
                column.replace(exp.Var(this=f"lateralAliasReference({_as_written(column, sql)})"))
            name = spark_name(named, text)
            p.replace(exp.alias_(p.copy(), exp.to_identifier(name, quoted=True)))
            names.setdefault(name.lower(), name)
            changed = True
    return changed


def _as_written(column: exp.Column, sql: str) -> str:
    """A column's name as the statement writes it (qualify lower-cased it; Spark names it as written)."""
    meta = column.this.meta if isinstance(column.this, exp.Identifier) else {}
    start, end = meta.get("start"), meta.get("end")
    written = sql[start:end + 1] if isinstance(start, int) and isinstance(end, int) else ""
    return written if written.lower() == column.name.lower() else column.name


def _reads_an_alias(text: str) -> bool:
    """Whether an alias followed by a comma is named again before the next ``FROM``: the only text a lateral
    alias reference can be written in (most statements have none, and then the tree is not walked).

    One pass over the words, in order, with the aliases named since the last ``FROM``: a search per alias
    over the rest of its select list made a 1,000-column select list cost a second. The words are read a
    stretch at a time, from one alias to the next (``findall``, ``index`` and ``isdisjoint`` run in C: a
    loop over every word cost as much as the rest of the gate). Counting each alias in the whole text to
    skip the stretches made it quadratic again (a 1,000-column select list: 0.9 s)."""
    aliases = [(m.end(), m.group(1)) for m in _ALIAS.finditer(text)]
    pending: set[str] = set()
    for k, (end, name) in enumerate(aliases):
        pending.add(name)
        words = _WORD.findall(text, end, aliases[k + 1][0] if k + 1 < len(aliases) else len(text))
        cut = words.index("from") if "from" in words else len(words)
        if not pending.isdisjoint(words[:cut]):
            return True
        if cut < len(words):
            pending.clear()
    return False
