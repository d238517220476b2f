"""Decode Spark's ``TreeNode.toJSON`` into a tree.

Spark writes a tree as a flat pre-order list: each node has ``class`` and
``num-children``, and a field holding a child holds that child's index among the
node's children. Plans and expressions use the same encoding; an expression
field of a plan node is itself such a list (a ``Seq[Expression]`` a list of them).
"""

from __future__ import annotations

from typing import Any


class Tree:
    """One decoded node: its class's simple name, raw fields and children."""

    __slots__ = ("cls", "fields", "children", "is_expression", "_cache")

    def __init__(self, cls: str, fields: dict[str, Any], children: tuple[Tree, ...],
                 is_expression: bool = False) -> None:
        self.cls = cls
        self.fields = fields
        self.children = children
        self.is_expression = is_expression
        self._cache: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Tree({self.cls}, {len(self.children)} children)"

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def expr(self, name: str) -> Tree | None:
        """The expression in field ``name`` (``None`` when absent or empty)."""
        key = "e:" + name
        if key not in self._cache:
            raw = self.fields.get(name)
            self._cache[key] = decode(raw) if _is_flat_tree(raw) else None
        return self._cache[key]

    def exprs(self, name: str) -> list[Tree]:
        """The expressions of a ``Seq[Expression]`` field, in order."""
        key = "s:" + name
        if key not in self._cache:
            raw = self.fields.get(name)
            out: list[Tree] = []
            if isinstance(raw, list):
                for item in raw:
                    if _is_flat_tree(item):
                        out.append(decode(item))
                    elif isinstance(item, list):  # Seq[Seq[Expression]], e.g. Expand.projections
                        out.extend(decode(x) for x in item if _is_flat_tree(x))
            self._cache[key] = out
        return self._cache[key]

    def expr_rows(self, name: str) -> list[list[Tree]]:
        """A ``Seq[Seq[Expression]]`` field (Expand projections, LocalRelation rows), decoded once."""
        key = "r:" + name
        if key not in self._cache:
            raw = self.fields.get(name)
            self._cache[key] = [
                [decode(x) for x in row if _is_flat_tree(x)] for row in raw if isinstance(row, list)
            ] if isinstance(raw, list) else []
        return self._cache[key]

    def plan(self, name: str) -> Tree | None:
        """A plan kept in a field rather than as a child (CTAS ``query``, subquery ``plan``)."""
        return self.expr(name)

    def field_plans(self):
        """Plans held in fields rather than as children: a command's query, a subquery's plan.

        Scans the raw JSON first and decodes only the fields that hold a plan.
        """
        for name, raw in self.fields.items():
            if not isinstance(raw, list) or not raw or name == "output":
                continue
            flats = raw if isinstance(raw[0], list) else [raw]
            for flat in flats:
                if not _is_flat_tree(flat):
                    continue
                if ".expressions." not in flat[0]["class"]:
                    yield decode(flat)  # a plan kept in a field (CTAS query)
                elif any("plan" in node for node in flat):
                    for sub in decode(flat).walk():
                        plan = sub.plan("plan") if "plan" in sub.fields else None
                        if plan is not None:
                            yield plan

    def deep_walk(self):
        """Every plan node below this one, including those of plans held in fields."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))
            stack.extend(node.field_plans())

    def walk(self):
        """Pre-order iteration over this node and its descendants."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def _is_flat_tree(raw: Any) -> bool:
    return isinstance(raw, list) and bool(raw) and isinstance(raw[0], dict) and "class" in raw[0]


def decode(flat: list[dict[str, Any]]) -> Tree:
    """Build the tree of a flat pre-order node list, in one pass from the end.

    Walking backwards, a node's children are the subtrees built just before it:
    the top ``num-children`` entries of the stack, first child on top. No
    recursion (deep plans), and the raw dict is kept as the node's fields (no copy).
    """
    stack: list[Tree] = []
    for raw in reversed(flat):
        count = raw.get("num-children", 0)
        if count:
            children = tuple(stack[-1:-count - 1:-1])
            del stack[-count:]
        else:
            children = ()
        qualified = raw["class"]
        cls = qualified[qualified.rfind(".") + 1:]
        if cls.endswith("$"):
            cls = cls[:-1]
        stack.append(Tree(cls, raw, children, ".expressions." in qualified))
    return stack[-1]


def named_outputs(raw: Any) -> list[tuple[int, str]]:
    """(exprId, name) of a ``Seq[NamedExpression]`` field, read from the raw JSON (no decoding)."""
    out: list[tuple[int, str]] = []
    if isinstance(raw, list):
        for flat in raw:
            if isinstance(flat, list) and flat and isinstance(flat[0], dict):
                head = flat[0]
                if str(head.get("class", "")).endswith(".OuterReference"):
                    # A subquery that selects a column of the outer row (``(SELECT salary)``): the outer
                    # attribute, held in the field ``e``, is the column it outputs.
                    held = head.get("e")
                    head = held[0] if isinstance(held, list) and held and isinstance(held[0], dict) else head
                expr_id = head.get("exprId")
                if isinstance(expr_id, dict) and "id" in expr_id:
                    out.append((expr_id["id"], str(head.get("name"))))
    return out


def scala_seq(value: Any) -> list[str]:
    """Spark prints a non-empty ``Seq[String]`` as ``"[a, b]"``; an empty one as ``[]``."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [p.strip() for p in inner.split(",")] if inner else []
    return []
