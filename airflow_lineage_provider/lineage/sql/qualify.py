"""Before resolution: a parsed statement qualified the way sqlglot's ``qualify`` does, step by step.

sqlglot's ``qualify`` steps that are of no use here (validation, quoting, dot-part recovery)
are skipped, its identifiers are lower-cased by a plain walk, its table step is mostly done by
one walk of our own (``_qualify_tables``) and its column step by ``columns.py``, on scopes the
resolver then reuses.
What qualify would lose is read first (``_prepare``): output names as written, USING /
NATURAL joins, the case of file paths.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify_columns import qualify_columns
from sqlglot.optimizer.qualify_tables import qualify_tables
from sqlglot.optimizer.scope import Scope
from sqlglot.schema import MappingSchema

from airflow_lineage_provider.lineage.model import SPARK_CATALOG
from airflow_lineage_provider.lineage.sql.aliases import name_lateral_references
from airflow_lineage_provider.lineage.sql.columns import qualify_columns as own_qualify_columns
from airflow_lineage_provider.lineage.sql.keywords import by_all
from airflow_lineage_provider.lineage.sql.paths import read_struct_paths
from airflow_lineage_provider.lineage.sql.pivot import name_pivot_values
from airflow_lineage_provider.lineage.sql.render import LEAF_VALUES, SPARK_DIALECT, FindAll, Finder
from airflow_lineage_provider.lineage.sql.scopes import COLLECTIBLE, NotTakenError, inner_owner
from airflow_lineage_provider.lineage.sql.using import later_keys, put_back

# ``parquet.`/path``` reads files, not a table of database ``parquet``: the formats Spark reads by path.
FILE_FORMATS = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "delta", "binaryfile"})


def qualify(query: exp.Expression, sql: str, text: str, db: str, schema: MappingSchema
            ) -> tuple[exp.Expression, dict[str, str], dict[int, str], Scope | None, dict[int, list[exp.Column]]]:
    """(qualified query, output names as written, USING joins, its root scope when built here, the columns of
    its WHERE clauses when known: ``where_columns``) of a parsed query of ``sql``; ``text``: ``sql`` lower-cased."""
    # The pre-pass looks for USING / NATURAL joins, and marks path reads (backquoted) for sqlglot's walk of
    # identifiers (``sqlglot.meta``; ours, ``_walk``, tells a path where it meets one): most statements have
    # neither, which plain substring tests tell far faster than a regular expression.
    marks = "`" in text and "sqlglot.meta" in text
    names, using = _prepare(query, walk="using" in text or "natural" in text or marks, walk_pivots="pivot" in text)
    # sqlglot's qualify, step by step: the steps it takes for validation, quoting and dot-part
    # recovery are of no use here, and its table step is mostly done by one walk of our own.
    # One walk lower-cases the identifiers and finds what the table step and the star steps look at.
    walked = _walk(query, text)
    if "*" in text and _tell_repeats_apart(query, walked.selects if walked else None):
        walked = None  # a renamed projection is a copy: the nodes found are no longer all in the tree
    if not _qualify_tables(query, db, walked.table_parts if walked else None):
        query, walked = qualify_tables(query, db=db, catalog=SPARK_CATALOG, dialect=SPARK_DIALECT), None
    # Spark's readings sqlglot lacks; they change columns inside selects, never the selects themselves.
    changed = read_struct_paths(query, text)
    changed = by_all(query, text, schema) or changed
    changed = name_lateral_references(query, sql, text, schema, names) or changed
    # What the walk noted for the scopes holds while no step since has changed a node ``_collect`` looks at
    # (the table step gives tables their database and catalog only).
    noted = walked.noted if walked is not None and not changed and not using else None
    # A star over a USING join then another join: what sqlglot's expansion leaves out, noted first.
    later = later_keys(query, using, schema) if using and "*" in text else []
    # Its column step too, on scopes the resolver reuses, when the query needs only its common steps.
    try:
        query, root = _columns(query, schema, using, noted)
    except OptimizeError as e:
        # ``FROM t JOIN t USING (k)``, ``FROM t, t``: Spark reads one relation twice under one name (a
        # column of it named with that name would be ambiguous there); sqlglot's scopes refuse it.
        if "Alias already used" not in str(e) or not _alias_repeated_tables(query):
            raise
        query, root, noted = *_columns(query, schema, using), None  # sqlglot's step may have changed the tree
    if root is None:
        walked = None  # sqlglot's column step may copy parts of the tree
    if later:
        put_back(later)
    # A star over a relation whose own star made two columns of one name (``LATERAL (SELECT t1.*, t2.*)``)
    # is left unexpanded: those inner stars are expanded now, so their repeats can be told apart.
    if "*" in text and _star_left(query, walked.selects if walked else None) and _tell_repeats_apart(query):
        query, root = qualify_columns(query, schema), None
    return query, names, using, root, where_columns(walked, noted is not None and root is not None, text)


def where_columns(walked: _Walked | None, held: bool, text: str) -> dict[int, list[exp.Column]]:
    """Per WHERE clause (its id), the columns below it, in the order a walk of the clause finds them: what the
    conditions step reads of a WHERE, found by the walk that lower-cases identifiers instead of a walk of its own.

    Only where that is all a walk of the clause would find, in a tree the walk's nodes are still in: ``held``
    (no step changed a node ``_collect`` looks at, and the column step was ours, which gives a WHERE's columns
    their table and changes nothing else in it), and a clause with columns alone below it (no subquery, no
    struct path), and no ``GROUPING`` in the statement (the conditions step does not read its columns).
    Any other WHERE is walked (``Conditions._indirect_expr``)."""
    if walked is None or not held or "grouping" in text:
        return {}
    columns = _ONLY_COLUMNS
    return {where: nodes[::-1] for where, nodes in walked.wheres.items()  # the walk took children last first
            if set(map(type, nodes)) <= columns}


_ONLY_COLUMNS = frozenset({exp.Column})


class _Walked(NamedTuple):
    """What the walk that lower-cases identifiers found on the way, for the steps after it."""

    table_parts: list[exp.Expression]  # what ``_TABLE_PARTS`` finds: the table step's nodes
    selects: list[exp.Select]  # every select, the query's own included
    noted: dict[int, list[exp.Expression]] | None  # per scope, what its ``_collect`` looks at (``scopes.py``)
    # Per WHERE clause (its id), the nodes of ``noted`` below it, in walk order (``Conditions``' fast path).
    wheres: dict[int, list[exp.Expression]]


def _walk(query: exp.Expression, text: str) -> _Walked | None:
    """sqlglot's ``normalize_identifiers`` for Spark in a plain walk (sqlglot's calls a Python function
    on every node and the dialect's method on every identifier, three times the cost), which also
    finds the nodes the table step and the star steps look at, and notes what each scope's ``_collect``
    would find (``scopes.py``): one walk of the tree instead of four.
    A comment can mark any node case-sensitive (``sqlglot.meta``): such a statement goes to sqlglot's
    walk, and ``None`` says nothing was found."""
    if "sqlglot.meta" in text:
        normalize_identifiers(query, dialect=SPARK_DIALECT)
        return None
    paths = "`" in text  # a path keeps its case (``_is_path``); paths are read only in backquotes
    identifier = exp.Identifier
    expression = exp.Expr
    leaves = _LEAVES
    codes = _WALK_CODES
    parts: list[exp.Expression] = []
    selects: list[exp.Select] = []
    # Per scope (its expression's id), its nodes ``Scope._collect`` looks at. ``None``: a shape ``scopes.py`` does
    # not take.
    noted: dict[int, list[exp.Expression]] | None = {}
    # A WHERE's nodes are noted under the WHERE (then put back in its scope's list at the end): the conditions
    # step reads a WHERE's columns from there rather than walking it again. (scope owner, place, WHERE).
    wheres: list[tuple[int, int, exp.Expression]] = []
    # Below a table or a column (``_TABLE_PARTS`` enters neither) only identifiers and selects are wanted.
    stack: list[exp.Expression] = [query]
    below: list[exp.Expression] = []
    to_stack, to_below = stack.append, below.append  # bound once, not per node
    # The scope of the node popped (its expression's id). Where a node starts a scope (or a WHERE), the scope
    # it is in goes onto the stack before the node's children: popped after all of them (the walk is depth
    # first), that mark gives the scope back. (One int a scope, where a stack of owners beside the nodes took
    # a push and a pop a node.)
    owner = id(query)
    for todo, finding in ((stack, True), (below, False)):
        pop = todo.pop
        push = to_below  # below a table or a column: where every node goes
        while todo:
            node = pop()
            try:
                code = codes[type(node)]  # a subscript the interpreter specializes, where ``get`` is a call
            except KeyError:
                code = codes[type(node)] = _walk_code(type(node))
            if not code:  # most nodes (conditions, operators, calls): nothing to note, only their children
                if finding:
                    push = to_stack
            elif code & 64:  # a mark: the nodes of a scope are done, what follows is in this one
                owner = node
                continue
            elif code == _NAMED and finding:  # a column or a table (most nodes noted): never a scope's own node
                parts.append(node)
                if noted is not None:
                    found = noted.get(owner)
                    if found is None:
                        noted[owner] = [node]
                    else:
                        found.append(node)
                push = to_below
            else:
                if code & 4:
                    selects.append(node)
                if finding:
                    if code & 1:
                        parts.append(node)
                    if code & 8 and noted is not None and id(node) != owner:  # a scope's own expression is not noted
                        found = noted.get(owner)
                        if found is None:
                            noted[owner] = [node]
                        else:
                            found.append(node)
                        if code & 16:
                            if code & 32:  # a WHERE: what is below it noted under it, its mark replaced at the end
                                wheres.append((owner, len(noted[owner]) - 1, node))
                                to_stack(owner)
                                owner = id(node)
                            else:
                                try:
                                    inner = inner_owner(node)
                                except NotTakenError:
                                    noted, inner = None, None
                                if inner and inner != owner:
                                    to_stack(owner)
                                    owner = inner
                    push = to_below if code & 2 else to_stack
                elif code & 8:
                    noted = None  # below a table or a column: rare, and sqlglot's
            # Identifiers, the most common nodes and leaves, are lower-cased here rather than pushed and popped;
            # ``set`` (which clears hashes up the tree) only when the name changes: most are in lower case already,
            # which ``islower`` tells without making a string (a name it says no to may have no letter at all).
            for value in node.args.values():
                kind = type(value)
                if kind in leaves:  # most values: strings, flags, unset arguments, literals (tested first, in C)
                    continue
                if kind is identifier:
                    name = value.this
                    if not name.islower() and name != name.lower() \
                            and not (paths and code & 2 and node.args.get("this") is value and _is_path(node)):
                        value.set("this", name.lower())
                elif kind is list:
                    for item in value:
                        kind = type(item)
                        if kind is identifier:  # (a path is a table's ``this``, in no list)
                            name = item.this
                            if not name.islower() and name != name.lower():
                                item.set("this", name.lower())
                        elif kind not in leaves and isinstance(item, expression):
                            push(item)
                elif isinstance(value, expression):
                    push(value)
    lists: dict[int, list[exp.Expression]] = {}
    if noted is not None:
        # Each WHERE's mark replaced by its nodes, the last first (a later mark in a list is further on,
        # and a WHERE inside another's nodes is put in those first): the scopes' lists as if never split.
        for owner, place, where in reversed(wheres):
            nodes = noted.pop(id(where), [])
            noted[owner][place:place + 1] = nodes
            lists[id(where)] = nodes
    return _Walked(parts, selects, noted, lists)


def _prepare(query: exp.Expression, walk: bool = True, walk_pivots: bool = False
             ) -> tuple[dict[str, str], dict[int, str]]:
    """One walk over the query before qualify changes it; returns what qualify would lose.

    - Output names as written (qualify lower-cases identifiers; Spark keeps the case of the name).
    - Selects joining with USING / NATURAL, and the side whose key Spark outputs (qualify makes
      it a COALESCE).
    And it keeps the case of file paths (``parquet.`/Data/In```), the only names Spark does not
    compare case-insensitively, which qualify would lower-case with the rest (a mark only sqlglot's walk of
    identifiers needs: ours tells a path itself). ``walk=False`` when the statement's text has no USING /
    NATURAL join and no path for sqlglot's walk: then there is nothing to find.
    """
    top = query
    while isinstance(top, (exp.SetOperation, exp.Subquery)):
        top = top.this
    names: dict[str, str] = {}
    star = False
    if isinstance(top, exp.Select):
        for p in top.expressions:
            name = p.alias if isinstance(p, exp.Alias) else (p.name if isinstance(p, exp.Column) else "")
            if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                star = True
            elif name:
                names.setdefault(name.lower(), name)
    using: dict[int, str] = {}
    if walk_pivots:  # the names a PIVOT / UNPIVOT makes keep the case typed (``'dotNET'``, ``valUe FOR colName``)
        for pivot in query.find_all(exp.Pivot):
            name_pivot_values(pivot)
            made = list(pivot.args.get("columns") or [])
            if pivot.args.get("unpivot"):
                made += [e for e in pivot.expressions if isinstance(e, exp.Identifier)]
                made += [i for e in pivot.expressions if isinstance(e, exp.Tuple) for i in e.expressions
                         if isinstance(i, exp.Identifier)]
                made += [f.this.this if isinstance(f.this, exp.Column) else f.this
                         for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)]
            for identifier in made:
                if isinstance(identifier, exp.Identifier):
                    names.setdefault(identifier.name.lower(), identifier.name)
    for node in _TABLES_AND_JOINS(query) if walk else ():
        if isinstance(node, exp.Table):
            if _is_path(node):
                node.this.meta["case_sensitive"] = True  # a path: qualify lower-cases every other name
        elif node.args.get("using") or str(node.args.get("method") or "").upper() == "NATURAL":
            side = str(node.args.get("side") or "").upper()
            using[id(node.parent)] = "both" if side == "FULL" else ("right" if side == "RIGHT" else "left")
    if star:  # names a star brings up from subqueries, and from alias lists (``VALUES .. AS t(ID, ST)``)
        found = _ALIASES(top)  # one walk for both (in ``find_all``'s order: a name's first kept), read in turn
        for alias in found:
            if isinstance(alias, exp.Alias):
                name = alias.alias
                if name:
                    names.setdefault(name.lower(), name)
        for relation in found:
            if isinstance(relation, exp.TableAlias):
                for column in relation.columns:
                    names.setdefault(column.name.lower(), column.name)
    return names, using


def _is_path(node: exp.Expression) -> bool:
    """Whether ``node`` is a table read by path (``parquet.`/Data/In```): its name, a path, keeps its case."""
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return False
    db = node.db
    return bool(db) and db.lower() in FILE_FORMATS


_TABLES_AND_JOINS = FindAll(exp.Table, exp.Join)
_ALIASES = FindAll(exp.Alias, exp.TableAlias)


# Marks a repeated output name of a subquery (``k`` + REPEAT + ``2``); the extractor strips it from the
# statement's output names (``output_name``), so the document names the repeats as it names any other.
REPEAT = "\x00"


def output_name(name: str) -> str:
    """A statement's output name without the mark ``_tell_repeats_apart`` gave a repeat."""
    return name.split(REPEAT, 1)[0]


def _columns(query: exp.Expression, schema: MappingSchema, using: dict[int, str],
             noted: dict[int, list[exp.Expression]] | None = None) -> tuple[exp.Expression, Any]:
    """sqlglot's column step: ours (``columns.py``) when the query needs only its common steps, else sqlglot's.
    ``noted``: what ``_walk`` noted for the scopes, while it holds."""
    root = own_qualify_columns(query, schema, noted) if not using else None
    return (query, root) if root is not None else (qualify_columns(query, schema), None)


def _alias_repeated_tables(query: exp.Expression) -> bool:
    """Give a relation a select reads again under the same name an alias of its own; whether any."""
    renamed = False
    for select in query.find_all(exp.Select):
        sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
        seen: set[str] = set()
        for source in sources:
            table = source.this if source is not None else None
            if not isinstance(table, exp.Table):
                continue
            name = table.alias_or_name
            if name in seen and not table.alias:
                n = 2
                while f"{name}_{n}" in seen:
                    n += 1
                table.set("alias", exp.TableAlias(this=exp.to_identifier(f"{name}_{n}")))
                name, renamed = f"{name}_{n}", True
            seen.add(name)
    return renamed


def _star_left(query: exp.Expression, selects: list[exp.Select] | None = None) -> bool:
    """Whether a select of ``query`` (of ``selects``, those the walk found, when given) still projects a star."""
    for select in query.find_all(exp.Select) if selects is None else selects:
        if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
               for p in select.expressions) and (selects is None or _within(select, query)):
            return True
    return False


def _within(node: exp.Expression, root: exp.Expression) -> bool:
    """Whether ``node`` is still in ``root``'s tree (the column step may have replaced what held it)."""
    while node is not None and node is not root:
        node = node.parent
    return node is root


def _tell_repeats_apart(query: exp.Expression, selects: list[exp.Select] | None = None) -> bool:
    """Mark a subquery's repeated output names (``SELECT a.k, b.k``) apart; whether any was.

    Spark expands a star over such a subquery by position, to two columns of one name; sqlglot
    leaves that star unexpanded (a name would be ambiguous). No outer query can name either
    column (Spark refuses the ambiguous reference), so only a star sees them: marked apart, they
    expand, and the statement's output names, the mark stripped, are told apart as the document
    tells any repeated name apart (``model.unique_names``).
    """
    renamed = False
    for select in query.find_all(exp.Select) if selects is None else selects:
        if select is query or not isinstance(select.parent, (exp.Subquery, exp.CTE, exp.SetOperation)):
            continue
        seen: set[str] = set()
        for i, p in enumerate(select.expressions):
            name = p.alias_or_name
            if not name or isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                continue
            n, unique = 1, name
            while unique in seen:
                n += 1
                unique = f"{output_name(name)}{REPEAT}{n}"
            seen.add(unique)
            if unique != name:
                target = p.this if isinstance(p, exp.Alias) else p
                select.expressions[i] = exp.alias_(target, exp.to_identifier(unique, quoted=True))
                renamed = True
    return renamed


# Sources sqlglot's qualify_tables gives names or default columns to, or rewrites.
_TABLE_WORK = (exp.Lateral, exp.Unnest, exp.Values, exp.Pivot, exp.TableFromRows)
_TABLE_FOUND = (exp.Table, exp.With, exp.Subquery, exp.Column, *_TABLE_WORK)
_TABLE_PARTS = Finder(_TABLE_FOUND, (exp.Table, exp.Column))
# Per class, what ``_walk`` does with a node: 1 a table part, 2 a table or column (not entered by the
# table step), 4 a select, 8 a node ``Scope._collect`` looks at, 16 one that may start a scope, 32 a WHERE;
# 64 the walk's own mark (an int) of where a scope's nodes end.
_WALK_CODES: dict[type, int] = {}
_NAMED = 1 | 2 | 8  # a column's or a table's code: a table part, not entered by the table step, noted; no scope


def _walk_code(cls: type) -> int:
    """What ``_walk`` does with a node of class ``cls`` (``_WALK_CODES``)."""
    if cls is int:
        return 64
    return (issubclass(cls, _TABLE_FOUND) | issubclass(cls, (exp.Table, exp.Column)) << 1
            | issubclass(cls, exp.Select) << 2 | issubclass(cls, COLLECTIBLE) << 3
            | issubclass(cls, (exp.CTE, exp.Query)) << 4
            | (cls is exp.Where) * 56)  # 8 | 16 | 32: noted (a mark), then owns its nodes


# The classes of an argument's value the walk has nothing to do with (no node it notes, no identifier below): most
# values of a tree (a literal's text, its flags, the arguments left unset) and leaf nodes such as literals.
_LEAVES = LEAF_VALUES - {exp.Identifier}


def _qualify_tables(query: exp.Expression, db: str, parts: list[exp.Expression] | None = None) -> bool:
    """Give every table read its catalog and database, as ``qualify_tables`` does, in one walk.

    ``qualify_tables`` builds the query's scopes to tell tables from CTE references, which cost
    a tenth of a static extraction. Most queries need nothing else of it: a table whose name
    no CTE has (or that names its database) is a table, and a bare name a CTE has is that CTE
    when the only WITH is the query's own and the reference is outside the bodies of that CTE
    and the ones before it. Returns False when the query needs the rest of ``qualify_tables``
    (an unnamed derived table, a generator, VALUES, a pivot, a table function, a
    ``db.table.column`` reference, a CTE name it cannot place), and then leaves the query as
    it found it. (Unlike ``qualify_tables``, a table keeps no alias it was not given:
    its name already names it, and new nodes are what this saves.) ``parts``: what ``_TABLE_PARTS``
    finds in the query, when a walk already found them.
    """
    if type(query) is exp.Subquery:
        return False
    tables: list[exp.Table] = []
    withs: list[exp.With] = []
    table_class, column_class = exp.Table, exp.Column  # looked up once: columns are most of the parts
    for node in _TABLE_PARTS(query) if parts is None else parts:
        kind = type(node)
        if kind is column_class:
            if "db" in node.args and node.args["db"] is not None:  # most columns have no "db" at all: no call
                return False
        elif kind is table_class:
            if type(node.this) is not exp.Identifier or node.args.get("joins") or node.args.get("pivots"):
                return False
            tables.append(node)
        elif kind is exp.Subquery:
            if (not node.alias and isinstance(node.parent, (exp.From, exp.Join))) or not isinstance(
                    node.this, (exp.Select, exp.SetOperation)):
                return False
        elif kind is exp.With:
            withs.append(node)
        else:
            return False
    ctes = {cte.alias_or_name for w in withs for cte in w.expressions}
    # A name with no database that a CTE has may be that CTE; every other table is a table.
    named = [table for table in tables if table.args.get("db") is None and table.name in ctes]
    if named:
        # That CTE it is outside the CTE bodies, and in the body of a later CTE of the same WITH; in
        # its own body or an earlier one it may be a table. Nested WITHs: not told here.
        if len(withs) > 1 or query.args.get("with_") is not withs[0]:
            return False
        defined: dict[str, int] = {}
        for position, cte in enumerate(withs[0].expressions):
            defined.setdefault(cte.alias_or_name, position)
        body_of = {id(cte): position for position, cte in enumerate(withs[0].expressions)}
        for table in named:
            body = table.find_ancestor(exp.CTE)
            if body is not None and body_of[id(body)] <= defined[table.name]:
                return False
    db_name, catalog_name = _names(db)
    references = {id(table) for table in named}
    for table in tables:
        if id(table) in references:
            continue
        args = table.args
        # ``to_identifier(name, quoted)``: ``Identifier(this=name, quoted=quoted)`` with no keywords to parse.
        if args.get("db") is None:
            table.set("db", exp.to_identifier(*db_name))
        if args.get("catalog") is None:
            table.set("catalog", exp.to_identifier(*catalog_name))
    return True


_NAMES: dict[str, tuple[tuple[str, bool], tuple[str, bool]]] = {}


def _names(db: str) -> tuple[tuple[str, bool], tuple[str, bool]]:
    """(name, quoted) of the database and catalog identifiers ``qualify_tables`` would give a table."""
    found = _NAMES.get(db)
    if found is None:
        ids = [normalize_identifiers(exp.parse_identifier(name, dialect=SPARK_DIALECT), dialect=SPARK_DIALECT)
               for name in (db, SPARK_CATALOG)]
        found = _NAMES[db] = ((ids[0].this, bool(ids[0].quoted)), (ids[1].this, bool(ids[1].quoted)))
    return found


def using_key(node: exp.Coalesce, side: str) -> exp.Expression:
    """The key column a USING join outputs: the left one, the right one, or (FULL) the coalesce of both."""
    args = [node.this, *node.expressions]
    if side == "both" or not all(isinstance(a, exp.Column) for a in args) or len({a.name for a in args}) != 1:
        return node
    return args[-1] if side == "right" else args[0]
