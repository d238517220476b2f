"""What a function does to lineage, by its SQL name: one table for both extractors.

The plan extractor meets Spark's expression classes and maps them to these names
through Spark's own function registry (``plan/spark_functions.json``); the static
extractor meets the names as written. So a function masks, ranks or aggregates the
same way in both.
"""

from __future__ import annotations

# Functions whose output hides the values of their inputs (hashes, masks, counts).
MASKING = frozenset({"md5", "sha", "sha1", "sha2", "crc32", "hash", "xxhash64", "mask", "count",
                     "approx_count_distinct"})

# Window functions whose value comes from the row's position alone: their inputs are the
# window's order keys, which are indirect (WINDOW) inputs, not values.
RANKING = frozenset({"rank", "dense_rank", "percent_rank", "cume_dist", "row_number", "ntile"})

# Window functions that read a value of another row without aggregating it.
OFFSET_WINDOW = frozenset({"lag", "lead", "nth_value"})

# Aggregate functions: an input read through one of them is an AGGREGATION.
AGGREGATES = frozenset({
    "sum", "avg", "mean", "min", "max", "count", "count_if", "first", "last", "first_value", "last_value",
    "collect_list", "collect_set", "array_agg", "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop",
    "var_samp", "corr", "covar_pop", "covar_samp", "percentile", "percentile_approx", "approx_percentile",
    "approx_count_distinct", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "every", "any", "some",
    "max_by", "min_by", "median", "mode", "skewness", "kurtosis", "regr_count", "regr_slope", "regr_intercept",
    "regr_r2", "regr_avgx", "regr_avgy", "regr_sxx", "regr_sxy", "regr_syy", "listagg", "string_agg",
    "histogram_numeric", "count_min_sketch", "hll_sketch_agg", "try_sum", "try_avg", "grouping", "grouping_id",
})

# Functions whose value is a bit of the grouping id: no source column.
GROUPING = frozenset({"grouping", "grouping_id"})

# The parameters of functions that take named arguments (``f(x, seed => 1)``), in order, each with the SQL
# of its default (``None``: none). Spark passes the arguments by position, defaults filled in, and names
# the call so (``count_min_sketch(x, 0.5, 0.5, 1)``, ``mask(name, X, x, n, NULL)``).
PARAMETERS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "count_min_sketch": (("column", None), ("epsilon", None), ("confidence", None), ("seed", None)),
    "sentences": (("str", None), ("language", "''"), ("country", "''")),
    "mask": (("str", None), ("upperchar", "'X'"), ("lowerchar", "'x'"), ("digitchar", "'n'"), ("otherchar", "NULL")),
}
