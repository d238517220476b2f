"""The type Spark widens a set operation's column to, and the types of the branch expressions it needs.

``SELECT v FROM t UNION ALL SELECT v + v FROM t`` over a ``DECIMAL(10,0)`` column: Spark casts each
branch whose type is not the common one (here ``DECIMAL(11,0)``) to it, and a cast that does not keep
every value (``model.widens``) makes the branch's columns a TRANSFORMATION. Only types the text tells
for sure are used (a column's declared type, a literal, a cast, ``+`` / ``-`` of those); any other
leaves the subtypes as they are.
"""

from __future__ import annotations

import re

from sqlglot import exp

from airflow_lineage_provider.lineage.model import NUMERIC_RANK

# The decimal precision each integral type fits in (Spark's ``DecimalType.forType``); their order is
# ``model.NUMERIC_RANK``'s.
_INTEGRAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_FRACTIONAL = {"float": 4, "double": 5}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
_MAX_PRECISION = 38


def literal_type(node: exp.Literal) -> str | None:
    """Spark's type of a literal: an integer fits ``int`` or ``bigint``; ``1.5`` is a decimal; a string."""
    if node.is_string:
        return "text"
    text = node.this
    if re.fullmatch(r"\d+", text):
        return "int" if int(text) <= 2**31 - 1 else "bigint" if int(text) <= 2**63 - 1 else None
    m = re.fullmatch(r"(\d*)\.(\d+)", text)
    if m:
        digits = len(m.group(1).lstrip("0")) + len(m.group(2))
        scale = len(m.group(2))
        return f"decimal({max(digits, scale, 1)},{scale})"
    return None


def arithmetic_type(kind: type, left: str | None, right: str | None) -> str | None:
    """The type of ``left + right`` / ``left - right`` when both are numbers Spark adds without a cast."""
    if left is None or right is None:
        return None
    if left in _INTEGRAL and right in _INTEGRAL:
        return left if NUMERIC_RANK[left] >= NUMERIC_RANK[right] else right
    a, b = _decimal(left), _decimal(right)
    if a is None or b is None or kind not in (exp.Add, exp.Sub):
        return None
    scale = max(a[1], b[1])
    precision = min(scale + max(a[0] - a[1], b[0] - b[1]) + 1, _MAX_PRECISION)
    return f"decimal({precision},{scale})"


def common_type(types: list[str | None]) -> str | None:
    """The type Spark widens all ``types`` to (``None`` when one is unknown or they have none it knows)."""
    if not types or any(t is None for t in types):
        return None
    found: str | None = types[0]
    for t in types[1:]:
        found = _wider(found, t) if found is not None else None
    return found


def _wider(a: str, b: str | None) -> str | None:
    if b is None:
        return None
    if a == b:
        return a
    if "text" in (a, b):  # a string beside a number is cast to the number
        other = b if a == "text" else a
        return other if other in _INTEGRAL or other in _FRACTIONAL or _DECIMAL.fullmatch(other) else None
    if a in _FRACTIONAL or b in _FRACTIONAL:
        if not all(t in _FRACTIONAL or _decimal(t) is not None for t in (a, b)):
            return None
        return "double" if "double" in (a, b) or _DECIMAL.fullmatch(a) or _DECIMAL.fullmatch(b) else "float"
    if a in _INTEGRAL and b in _INTEGRAL:
        return a if NUMERIC_RANK[a] >= NUMERIC_RANK[b] else b
    x, y = _decimal(a), _decimal(b)
    if x is None or y is None:
        return None
    scale = max(x[1], y[1])
    precision = min(scale + max(x[0] - x[1], y[0] - y[1]), _MAX_PRECISION)
    return f"decimal({precision},{scale})"


def _decimal(t: str) -> tuple[int, int] | None:
    """(precision, scale) of a decimal, or of the decimal an integral type fits in."""
    if t in _INTEGRAL:
        return _INTEGRAL[t], 0
    m = _DECIMAL.fullmatch(t)
    return (int(m.group(1)), int(m.group(2))) if m else None
