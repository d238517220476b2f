"""The lean plan format: what the driver dumps and the resolver walks (``lean/2``).

Spark's ``toJSON`` is verbose; the digest (``digest.py``) keeps only what
resolution reads. This module is the format's contract, read by the builder and
the resolver alike: the node kinds, the reference codes, how a node's outputs
follow from its children, and the packing of table schemas.

Lean record (``"format": "lean/2"``)::

    nodes      [{"k": kind, "o": [exprId, ...], "c": [child, ...], ...}, ...]; children come first
    query      index of the node whose output is written
    names      output column names of ``query``
    datasets   [Dataset.to_dict(), ...]; relation nodes point into it ("ds")
    conds      [[subtype, [exprId, ...], subqueries, scope nodes, every column of scope?(, paths)], ...]
    outer      exprIds read by correlated subqueries (they filter the result)
    target     the written Dataset, or null; ``columns`` user-given target column names
    static     static partition columns; ``warnings`` what the digest could not read
    schemas    {catalog table: "column\tSQL type\n..."} of the tables read and written

and every top-level key of the raw record it was digested from but ``plan`` and ``extras``
(``record.py``: index, sql, line, kind, execution_id, ...), with, for a listener event, what
the reader's reduction needs that the plan held (``command``, ``target_key``: ``events.lean_keys``).
``record.check_readable`` refuses a lean record of another version.

A MAP node with ``"loop"`` is a recursive CTE's reference to itself: its children are the
loop's anchor and recursion, and the resolver takes it to a fixpoint.

A DEF node's ``"d"`` is flat: ``[exprId, expression, exprId, expression, ...]``, and
its ``"o"`` is left out when it is the exprIds of ``"d"``, after its children's outputs
if ``"p"`` (a join, a window, a generator) — see ``outputs``. An
expression is ``[text, refs]``, or ``[text, refs, subqueries]`` when it has any; refs
are flat too, ``[exprId, code, ...]`` with ``code = step << 3 | flags`` (step: 0 identity,
1 transformation, 2 aggregation; flags: 1 masking, 2 conditional, 4 Spark-generated
name); a subquery is ``[is_scalar, plan node]``. An expression that reads struct fields has a
fourth item, ``paths``: per reference, the field path read from it (``"geo.lat"``) or ``""``. Reading it back is most of
extraction's cost, hence the flat lists and integer codes: fewer JSON values to build.
"""

from __future__ import annotations

from typing import Any, Callable

from airflow_lineage_provider.lineage.model import AGGREGATION, IDENTITY, TRANSFORMATION

LEAN = "lean/2"

# Kinds of lean node.
REL = "rel"      # reads a table or files: "ds" is its dataset
CONST = "const"  # rows made of literals: no sources
DEF = "def"      # "d" defines some outputs by expressions; the others come from "c" unchanged
MAP = "map"      # output i is output i of each node in "c" (UNION, a CTE reference)
REN = "ren"      # output i is exprId "r"[i] of the only child (renamed, unchanged)
EXPAND = "expand"  # "rows": one list of expressions per kind of output row

MASKING, CONDITIONAL_REF, GENERATED = 1, 2, 4
STEPS = (IDENTITY, TRANSFORMATION, AGGREGATION)  # a ref's code >> 3 indexes this
STEP_CODES = {step: code for code, step in enumerate(STEPS)}


def ref_code(subtype: str, masking: bool, conditional: bool, generated: bool) -> int:
    """The integer a reference is packed into: ``step << 3 | flags``."""
    return (STEP_CODES.get(subtype, 1) << 3 | (MASKING if masking else 0) | (CONDITIONAL_REF if conditional else 0)
            | (GENERATED if generated else 0))


def outputs(nodes: list[dict[str, Any]], index: int, cache: dict[int, list[int]]) -> list[int]:
    """The exprIds node ``index`` outputs, in order; ``cache`` keeps those already worked out."""
    found = cache.get(index)
    if found is None:
        node = nodes[index]
        found = node.get("o")
        if found is None:
            found = derived_outputs(node, lambda child: outputs(nodes, child, cache))
        cache[index] = found
    return found


def derived_outputs(node: dict[str, Any], child_outputs: Callable[[int], list[int]]) -> list[int]:
    """A DEF node's outputs when it does not list them: its definitions, after its children's
    outputs if it passes them through (``"p"``)."""
    defined = node["d"][0::2]
    if node.get("p"):
        return [e for child in node["c"] for e in child_outputs(child)] + defined
    return defined


def is_lean(record: dict[str, Any]) -> bool:
    return record.get("format") == LEAN


def pack_columns(columns: list[list[str]]) -> str | list[list[str]]:
    """``"name\ttype\n..."``: one JSON string reads back far faster than a list of pairs.
    A name or type holding a tab or a newline (Spark allows both, quoted) keeps the pairs."""
    if any("\t" in part or "\n" in part for column in columns for part in column):
        return columns
    return "\n".join(f"{name}\t{type_}" for name, type_ in columns)


def unpack_columns(packed: str | list[list[str]]) -> list[tuple[str, str]]:
    """The ``[(column, SQL type), ...]`` of a lean record's ``schemas`` entry."""
    if isinstance(packed, str):
        return [tuple(line.split("\t", 1)) for line in packed.split("\n")] if packed else []  # type: ignore[misc]
    return [(str(name), str(type_)) for name, type_ in packed]
