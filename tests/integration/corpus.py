"""The plan extractor's corpus: SQL over a small schema with the lineage a person expects.

Each case names its expected direct inputs per output column as ``table.field:S``
(``S``: I identity, T transformation, A aggregation; a trailing ``!`` means
masked) and its statement-level indirect inputs as ``table.field:SUBTYPE``.
Tables are named by their last part. The schema is ``data/corpus_schema.sql``.
"""

from __future__ import annotations

from tests.integration.case import Case

C = Case
MI_TWO = "FROM emp INSERT INTO out2 SELECT name, salary INSERT INTO hive_emp SELECT id, upper(name)"
MI_WHERE = ("FROM emp e INSERT OVERWRITE TABLE out2 SELECT e.dept, e.salary * 2 WHERE e.age > 30 "
            "INSERT INTO out_part PARTITION (p) SELECT e.id, e.name, e.dept WHERE e.age <= 30")
MI_WITH = ("WITH w AS (SELECT id, name, salary FROM emp WHERE salary > 0) "
           "FROM w INSERT INTO out2 SELECT name, salary INSERT INTO hive_emp SELECT id, name")
MI_UNION = ("FROM (SELECT name, dept FROM emp UNION ALL (SELECT dname, region FROM dept)) u "
            "INSERT INTO out2 SELECT name, length(dept) INSERT INTO out_part PARTITION (p = 'x') SELECT length(name), dept")
MI_TWICE = "FROM emp INSERT INTO `out2` SELECT `name`, salary INSERT INTO out2 SELECT dept, age"
MI_JOIN = ("FROM emp e JOIN dept d ON e.dept = d.dept "
           "INSERT INTO out2 SELECT d.dname, e.salary INSERT INTO hive_emp SELECT e.id, d.region")
CASES: list[Case] = [
    # -- projection, casts, expressions ------------------------------------------------
    C("project_identity", "SELECT id, name FROM emp", {"id": {"emp.id:I"}, "name": {"emp.name:I"}}),
    C("alias_is_identity", "SELECT name AS n FROM emp", {"n": {"emp.name:I"}}),
    C("widening_cast_is_identity", "SELECT CAST(age AS BIGINT) AS a FROM emp", {"a": {"emp.age:I"}}),
    C("narrowing_cast_is_transformation", "SELECT CAST(salary AS INT) AS s FROM emp", {"s": {"emp.salary:T"}}),
    C("cast_to_string_is_transformation", "SELECT CAST(id AS STRING) AS s FROM emp", {"s": {"emp.id:T"}}),
    C("arithmetic", "SELECT salary * 12 + age AS x FROM emp", {"x": {"emp.salary:T", "emp.age:T"}}),
    C("concat", "SELECT concat(name, dept) AS x FROM emp", {"x": {"emp.name:T", "emp.dept:T"}}),
    C("literals_have_no_source", "SELECT 1 AS one, 'x' AS s FROM emp", {"one": set(), "s": set()}),
    C("array_and_size", "SELECT tags[0] AS t0, size(tags) AS n FROM emp", {"t0": {"emp.tags:T"}, "n": {"emp.tags:T"}}),
    # A field of a struct made in place reads that field's value only (``struct_made_in_place`` below).
    C("struct_field", "SELECT named_struct('n', name, 'd', dept).n AS n FROM emp", {"n": {"emp.name:I"}}),
    C("json_function", "SELECT get_json_object(name, '$.a') AS j FROM emp", {"j": {"emp.name:T"}}),
    C("nested_functions", "SELECT upper(trim(concat(name, '-', dept))) AS x FROM emp",
      {"x": {"emp.name:T", "emp.dept:T"}}),
    C("date_function", "SELECT date_format(ts, 'yyyy') AS y, year(ts) AS y2 FROM emp",
      {"y": {"emp.ts:T"}, "y2": {"emp.ts:T"}}),
    # -- conditionals -------------------------------------------------------------------
    C("case_when", "SELECT CASE WHEN age > 30 THEN name ELSE dept END AS c FROM emp",
      {"c": {"emp.name:T", "emp.dept:T"}}, {"emp.age:CONDITIONAL"}),
    C("if_with_literals", "SELECT if(salary > 100, 'high', 'low') AS band FROM emp", {"band": set()},
      {"emp.salary:CONDITIONAL"}),
    C("coalesce", "SELECT coalesce(name, dept) AS x FROM emp", {"x": {"emp.name:T", "emp.dept:T"}}),
    C("nvl2", "SELECT nvl2(mgr_id, name, dept) AS x FROM emp", {"x": {"emp.name:T", "emp.dept:T"}},
      {"emp.mgr_id:CONDITIONAL"}),
    C("case_simple_form", "SELECT CASE dept WHEN 'a' THEN salary ELSE 0 END AS x FROM emp",
      {"x": {"emp.salary:T"}}, {"emp.dept:CONDITIONAL"}),
    # -- masking ---------------------------------------------------------------------------
    C("md5_masks", "SELECT md5(name) AS h FROM emp", {"h": {"emp.name:T!"}}),
    C("sha2_masks", "SELECT sha2(concat(name, dept), 256) AS h FROM emp", {"h": {"emp.name:T!", "emp.dept:T!"}}),
    C("hash_masks", "SELECT hash(name, id) AS h FROM emp", {"h": {"emp.name:T!", "emp.id:T!"}}),
    C("mask_masks", "SELECT mask(name) AS m FROM emp", {"m": {"emp.name:T!"}}),
    C("xxhash64_crc32_sha1", "SELECT xxhash64(name) AS a, crc32(dept) AS b, sha1(name) AS c FROM emp",
      {"a": {"emp.name:T!"}, "b": {"emp.dept:T!"}, "c": {"emp.name:T!"}}),
    # -- filters, sorting, limits ----------------------------------------------------------
    C("where", "SELECT name FROM emp WHERE salary > 100 AND dept = 'x'", {"name": {"emp.name:I"}},
      {"emp.salary:FILTER", "emp.dept:FILTER"}),
    C("order_by", "SELECT name FROM emp ORDER BY ts DESC", {"name": {"emp.name:I"}}, {"emp.ts:SORT"}),
    C("limit", "SELECT name FROM emp LIMIT 5", {"name": {"emp.name:I"}}),
    C("limit_offset", "SELECT name FROM emp ORDER BY id LIMIT 5 OFFSET 2", {"name": {"emp.name:I"}}, {"emp.id:SORT"}),
    C("tablesample", "SELECT name FROM emp TABLESAMPLE (50 PERCENT)", {"name": {"emp.name:I"}}),
    C("distinct", "SELECT DISTINCT dept FROM emp", {"dept": {"emp.dept:I"}}),
    C("repartition_hint", "SELECT /*+ REPARTITION(4, dept) */ name FROM emp", {"name": {"emp.name:I"}}),
    C("rebalance_hint", "SELECT /*+ REBALANCE */ name FROM emp", {"name": {"emp.name:I"}}),
    C("distribute_sort_by", "SELECT name FROM emp DISTRIBUTE BY dept SORT BY ts", {"name": {"emp.name:I"}},
      {"emp.ts:SORT"}),
    C("nested_from_subqueries", "SELECT upper(n) AS u FROM (SELECT concat(name, dept) AS n FROM (SELECT * FROM emp) a) b",
      {"u": {"emp.name:T", "emp.dept:T"}}),
    C("subquery_alias_rename", "SELECT x.n FROM (SELECT name AS n FROM emp WHERE age > 1) x", {"n": {"emp.name:I"}},
      {"emp.age:FILTER"}),
    # -- joins -----------------------------------------------------------------------------
    C("inner_join", "SELECT e.name, d.dname FROM emp e JOIN dept d ON e.dept = d.dept",
      {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("left_join", "SELECT e.name, d.dname FROM emp e LEFT JOIN dept d ON e.dept = d.dept",
      {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("right_join", "SELECT e.name, d.dname FROM emp e RIGHT OUTER JOIN dept d ON e.dept = d.dept",
      {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("full_join", "SELECT e.name, d.dname FROM emp e FULL OUTER JOIN dept d ON e.dept = d.dept",
      {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("cross_join", "SELECT e.name, d.dname FROM emp e CROSS JOIN dept d",
      {"name": {"emp.name:I"}, "dname": {"dept.dname:I"}}),
    C("comma_join_where", "SELECT e.name, o.amount FROM emp e, orders o WHERE e.id = o.emp_id",
      {"name": {"emp.name:I"}, "amount": {"orders.amount:I"}}, {"emp.id:FILTER", "orders.emp_id:FILTER"}),
    C("non_equi_join", "SELECT e.name FROM emp e JOIN dept d ON e.dept = d.dept AND e.salary > 10",
      {"name": {"emp.name:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN", "emp.salary:JOIN"}),
    C("left_semi_join", "SELECT name FROM emp e LEFT SEMI JOIN dept d ON e.dept = d.dept", {"name": {"emp.name:I"}},
      {"emp.dept:FILTER", "dept.dept:FILTER"}),
    C("left_anti_join", "SELECT name FROM emp e LEFT ANTI JOIN orders o ON e.id = o.emp_id", {"name": {"emp.name:I"}},
      {"emp.id:FILTER", "orders.emp_id:FILTER"}),
    C("join_using", "SELECT dept, name, dname FROM emp JOIN dept USING (dept)",
      {"dept": {"emp.dept:I"}, "name": {"emp.name:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("full_join_using_coalesces_key", "SELECT dept FROM emp FULL JOIN dept USING (dept)",
      {"dept": {"emp.dept:T", "dept.dept:T"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("natural_join", "SELECT dept, dname FROM emp NATURAL JOIN dept",
      {"dept": {"emp.dept:I"}, "dname": {"dept.dname:I"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("self_join", "SELECT a.name, b.name AS boss FROM emp a JOIN emp b ON a.mgr_id = b.id",
      {"name": {"emp.name:I"}, "boss": {"emp.name:I"}}, {"emp.mgr_id:JOIN", "emp.id:JOIN"}),
    C("three_way_join", "SELECT e.name, d.region, o.amount FROM emp e JOIN dept d ON e.dept = d.dept "
      "JOIN orders o ON o.emp_id = e.id",
      {"name": {"emp.name:I"}, "region": {"dept.region:I"}, "amount": {"orders.amount:I"}},
      {"emp.dept:JOIN", "dept.dept:JOIN", "orders.emp_id:JOIN", "emp.id:JOIN"}),
    C("lateral_subquery", "SELECT e.id, t.total FROM emp e, LATERAL (SELECT sum(amount) AS total FROM orders o "
      "WHERE o.emp_id = e.id) t", {"id": {"emp.id:I"}, "total": {"orders.amount:A"}},
      {"orders.emp_id:FILTER", "emp.id:FILTER"}),
    # -- aggregation -------------------------------------------------------------------------
    C("group_by_sum", "SELECT dept, sum(salary) AS total FROM emp GROUP BY dept",
      {"dept": {"emp.dept:I"}, "total": {"emp.salary:A"}}, {"emp.dept:GROUP_BY"}),
    C("count_star_has_no_source", "SELECT dept, count(*) AS n FROM emp GROUP BY dept",
      {"dept": {"emp.dept:I"}, "n": set()}, {"emp.dept:GROUP_BY"}),
    C("count_column_masks", "SELECT count(name) AS n FROM emp", {"n": {"emp.name:A!"}}),
    C("distinct_aggregates", "SELECT count(DISTINCT name) AS n, sum(DISTINCT salary) AS s FROM emp",
      {"n": {"emp.name:A!"}, "s": {"emp.salary:A"}}),
    C("several_distinct_aggregates", "SELECT count(DISTINCT dept) AS nd, count(DISTINCT name) AS nn FROM emp",
      {"nd": {"emp.dept:A!"}, "nn": {"emp.name:A!"}}),
    C("having", "SELECT dept, avg(salary) AS a FROM emp GROUP BY dept HAVING max(age) > 30",
      {"dept": {"emp.dept:I"}, "a": {"emp.salary:A"}}, {"emp.dept:GROUP_BY", "emp.age:FILTER"}),
    C("aggregate_filter_clause", "SELECT sum(salary) FILTER (WHERE age > 30) AS s FROM emp", {"s": {"emp.salary:A"}},
      {"emp.age:CONDITIONAL"}),
    C("expression_over_aggregates", "SELECT upper(dept) AS d, max(salary) - min(salary) AS spread FROM emp "
      "GROUP BY upper(dept)", {"d": {"emp.dept:T"}, "spread": {"emp.salary:A"}}, {"emp.dept:GROUP_BY"}),
    C("grouping_sets", "SELECT dept, age, sum(salary) AS s FROM emp GROUP BY GROUPING SETS ((dept), (age))",
      {"dept": {"emp.dept:I"}, "age": {"emp.age:I"}, "s": {"emp.salary:A"}},
      {"emp.dept:GROUP_BY", "emp.age:GROUP_BY"}),
    C("rollup", "SELECT dept, age, count(*) AS n FROM emp GROUP BY ROLLUP(dept, age)",
      {"dept": {"emp.dept:I"}, "age": {"emp.age:I"}, "n": set()}, {"emp.dept:GROUP_BY", "emp.age:GROUP_BY"}),
    C("cube_with_grouping_id", "SELECT dept, sum(salary) AS s, grouping_id() AS g FROM emp GROUP BY CUBE(dept)",
      {"dept": {"emp.dept:I"}, "s": {"emp.salary:A"}, "g": set()}, {"emp.dept:GROUP_BY"}),
    C("global_aggregate", "SELECT max(ts) AS latest, avg(age) AS a FROM emp", {"latest": {"emp.ts:A"}, "a": {"emp.age:A"}}),
    C("aggregate_of_expression", "SELECT sum(salary * age) AS x FROM emp", {"x": {"emp.salary:A", "emp.age:A"}}),
    # -- windows -----------------------------------------------------------------------------
    C("window_rank", "SELECT name, rank() OVER (PARTITION BY dept ORDER BY salary DESC) AS r FROM emp",
      {"name": {"emp.name:I"}, "r": set()}, {"emp.dept:WINDOW", "emp.salary:WINDOW"}),
    C("window_row_number", "SELECT row_number() OVER (ORDER BY ts) AS rn FROM emp", {"rn": set()}, {"emp.ts:WINDOW"}),
    C("window_sum", "SELECT name, sum(salary) OVER (PARTITION BY dept) AS s FROM emp",
      {"name": {"emp.name:I"}, "s": {"emp.salary:A"}}, {"emp.dept:WINDOW"}),
    C("window_lag", "SELECT lag(salary, 1) OVER (PARTITION BY dept ORDER BY ts) AS prev FROM emp",
      {"prev": {"emp.salary:T"}}, {"emp.dept:WINDOW", "emp.ts:WINDOW"}),
    C("window_lead_default", "SELECT lead(name, 1, 'none') OVER (ORDER BY id) AS nxt FROM emp",
      {"nxt": {"emp.name:T"}}, {"emp.id:WINDOW"}),
    C("window_ntile", "SELECT ntile(4) OVER (ORDER BY salary) AS q FROM emp", {"q": set()}, {"emp.salary:WINDOW"}),
    C("window_frame_avg", "SELECT avg(salary) OVER (PARTITION BY dept ORDER BY ts ROWS BETWEEN 2 PRECEDING "
      "AND CURRENT ROW) AS mov FROM emp", {"mov": {"emp.salary:A"}}, {"emp.dept:WINDOW", "emp.ts:WINDOW"}),
    C("window_then_filter", "SELECT name FROM (SELECT name, row_number() OVER (PARTITION BY dept ORDER BY ts) AS rn "
      "FROM emp) t WHERE rn = 1", {"name": {"emp.name:I"}}, {"emp.dept:WINDOW", "emp.ts:WINDOW"}),
    # -- generators -------------------------------------------------------------------------
    C("lateral_view_explode_split", "SELECT id, word FROM emp LATERAL VIEW explode(split(name, ' ')) t AS word",
      {"id": {"emp.id:I"}, "word": {"emp.name:T"}}),
    C("lateral_view_outer_explode", "SELECT id, tag FROM emp LATERAL VIEW OUTER explode(tags) t AS tag",
      {"id": {"emp.id:I"}, "tag": {"emp.tags:T"}}),
    C("posexplode", "SELECT pos, tag FROM emp LATERAL VIEW posexplode(tags) t AS pos, tag",
      {"pos": {"emp.tags:T"}, "tag": {"emp.tags:T"}}),
    C("inline_structs", "SELECT x, y FROM emp LATERAL VIEW inline(array(struct(name, dept))) t AS x, y",
      {"x": {"emp.name:T", "emp.dept:T"}, "y": {"emp.name:T", "emp.dept:T"}}),
    C("explode_in_select", "SELECT explode(tags) AS tag FROM emp", {"tag": {"emp.tags:T"}}),
    C("table_valued_generator_of_literals", "SELECT col FROM explode(array(1, 2, 3))", {"col": set()}),
    C("generator_over_join", "SELECT e.id, w FROM emp e JOIN dept d ON e.dept = d.dept "
      "LATERAL VIEW explode(split(d.region, ',')) t AS w", {"id": {"emp.id:I"}, "w": {"dept.region:T"}},
      {"emp.dept:JOIN", "dept.dept:JOIN"}),
    C("range_has_no_source", "SELECT id * 2 AS x FROM range(10)", {"x": set()}),
    # -- set operations ------------------------------------------------------------------------
    C("union", "SELECT name FROM emp UNION SELECT dname FROM dept", {"name": {"emp.name:I", "dept.dname:I"}}),
    C("union_all_three", "SELECT id FROM emp UNION ALL SELECT oid FROM orders UNION ALL SELECT emp_id FROM orders",
      {"id": {"emp.id:I", "orders.oid:I", "orders.emp_id:I"}}),
    C("union_by_position", "SELECT name, dept FROM emp UNION ALL SELECT region, dname FROM dept",
      {"name": {"emp.name:I", "dept.region:I"}, "dept": {"emp.dept:I", "dept.dname:I"}}),
    C("union_widening", "SELECT age FROM emp UNION ALL SELECT emp_id FROM orders",
      {"age": {"emp.age:I", "orders.emp_id:I"}}),
    C("intersect", "SELECT dept FROM emp INTERSECT SELECT dept FROM dept", {"dept": {"emp.dept:I"}}, {"dept.dept:FILTER"}),
    C("except", "SELECT dept FROM emp EXCEPT SELECT dept FROM dept", {"dept": {"emp.dept:I"}}, {"dept.dept:FILTER"}),
    C("except_all", "SELECT dept FROM emp EXCEPT ALL SELECT dept FROM dept", {"dept": {"emp.dept:I"}},
      {"dept.dept:FILTER"}),
    # -- CTEs and subqueries -------------------------------------------------------------------
    C("cte", "WITH c AS (SELECT id, upper(name) AS un FROM emp) SELECT un FROM c", {"un": {"emp.name:T"}}),
    C("cte_referenced_twice", "WITH c AS (SELECT id, name FROM emp WHERE age > 30) "
      "SELECT a.name, b.id FROM c a JOIN c b ON a.id = b.id", {"name": {"emp.name:I"}, "id": {"emp.id:I"}},
      {"emp.age:FILTER", "emp.id:JOIN"}),
    C("cte_chain", "WITH a AS (SELECT id, salary * 2 AS s2 FROM emp), b AS (SELECT id, s2 + 1 AS s3 FROM a) "
      "SELECT s3 FROM b", {"s3": {"emp.salary:T"}}),
    C("cte_inside_subquery", "SELECT * FROM (WITH c AS (SELECT dept FROM emp) SELECT dept FROM c) x",
      {"dept": {"emp.dept:I"}}),
    C("scalar_subquery", "SELECT name, (SELECT max(amount) FROM orders) AS mx FROM emp",
      {"name": {"emp.name:I"}, "mx": {"orders.amount:A"}}),
    C("correlated_scalar_subquery", "SELECT name, (SELECT sum(amount) FROM orders o WHERE o.emp_id = e.id) AS total "
      "FROM emp e", {"name": {"emp.name:I"}, "total": {"orders.amount:A"}}, {"orders.emp_id:FILTER", "emp.id:FILTER"}),
    # A scalar subquery that only selects columns of the outer row: they are its value, not a correlation.
    C("scalar_subquery_of_outer_column", "SELECT id, (SELECT salary) AS s FROM emp",
      {"id": {"emp.id:I"}, "s": {"emp.salary:T"}}),
    C("scalar_subquery_of_outer_expression", "SELECT (SELECT upper(e.name) AS x) AS u FROM emp e",
      {"u": {"emp.name:T"}}),
    C("scalar_subquery_of_outer_column_twice_parenthesised", "SELECT ((SELECT `salary`)) AS `s` FROM emp",
      {"s": {"emp.salary:T"}}),
    C("scalar_subquery_of_outer_column_unaliased", "SELECT id, (SELECT salary) FROM emp",
      {"id": {"emp.id:I"}, "scalarsubquery(salary)": {"emp.salary:T"}}),
    C("scalar_subquery_of_outer_column_over_join", "CREATE TABLE ctas_sq USING parquet AS SELECT d.dname, "
      "(SELECT e.name) AS n FROM emp e JOIN dept d ON e.dept = d.dept",
      {"dname": {"dept.dname:I"}, "n": {"emp.name:T"}}, {"emp.dept:JOIN", "dept.dept:JOIN"}, target="ctas_sq",
      setup="DROP TABLE IF EXISTS ctas_sq"),
    C("scalar_subquery_of_outer_column_in_union", "SELECT (SELECT name) AS n FROM emp UNION ALL SELECT dname FROM dept",
      {"n": {"emp.name:T", "dept.dname:I"}}),
    C("scalar_subquery_of_outer_column_in_where", "SELECT name FROM emp WHERE (SELECT salary) > 10",
      {"name": {"emp.name:I"}}, {"emp.salary:FILTER"}),
    C("scalar_subquery_of_outer_column_and_correlation", "SELECT (SELECT e.name FROM dept d WHERE d.dept = e.dept) "
      "AS n FROM emp e", {"n": {"emp.name:T"}}, {"emp.dept:FILTER", "dept.dept:FILTER"}),
    C("in_subquery", "SELECT name FROM emp WHERE dept IN (SELECT dept FROM dept WHERE region = 'eu')",
      {"name": {"emp.name:I"}}, {"emp.dept:FILTER", "dept.dept:FILTER", "dept.region:FILTER"}),
    C("exists", "SELECT name FROM emp e WHERE EXISTS (SELECT 1 FROM orders o WHERE o.emp_id = e.id)",
      {"name": {"emp.name:I"}}, {"orders.emp_id:FILTER", "emp.id:FILTER"}),
    C("not_exists", "SELECT name FROM emp e WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.emp_id = e.id)",
      {"name": {"emp.name:I"}}, {"orders.emp_id:FILTER", "emp.id:FILTER"}),
    # -- views, functions -----------------------------------------------------------------------
    C("temp_view", "SELECT uname FROM tv", {"uname": {"emp.name:T"}}),
    C("persistent_view", "SELECT dept, n FROM pv", {"dept": {"emp.dept:I"}, "n": set()}, {"emp.dept:GROUP_BY"}),
    C("view_join", "SELECT tv.uname, o.amount FROM tv JOIN orders o ON tv.id = o.emp_id",
      {"uname": {"emp.name:T"}, "amount": {"orders.amount:I"}}, {"emp.id:JOIN", "orders.emp_id:JOIN"}),
    C("python_udf", "SELECT py_upper(name) AS u FROM emp", {"u": {"emp.name:T"}}),
    C("sql_udf", "SELECT sq_plus(salary) AS s FROM emp", {"s": {"emp.salary:T"}}),
    # -- pivot / unpivot -------------------------------------------------------------------------
    C("pivot", "SELECT * FROM (SELECT dept, age, salary FROM emp) PIVOT (sum(salary) FOR dept IN ('a' AS a, 'b' AS b))",
      {"age": {"emp.age:I"}, "a": {"emp.salary:A"}, "b": {"emp.salary:A"}},
      {"emp.age:GROUP_BY", "emp.dept:GROUP_BY", "emp.dept:CONDITIONAL"}),
    C("unpivot", "SELECT * FROM dept UNPIVOT (val FOR col IN (dname, region))",
      {"dept": {"dept.dept:I"}, "col": set(), "val": {"dept.dname:I", "dept.region:I"}},
      {"dept.dname:FILTER", "dept.region:FILTER"}),
    # -- writes --------------------------------------------------------------------------------------
    C("insert_with_column_list", "INSERT INTO out2 (b, a) SELECT salary, name FROM emp",
      {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, target="out2"),
    C("insert_overwrite", "INSERT OVERWRITE TABLE out2 SELECT name, salary FROM emp",
      {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, target="out2"),
    C("insert_static_partition", "INSERT INTO out_part PARTITION (p = 'x') SELECT id, name FROM emp",
      {"id": {"emp.id:I"}, "name": {"emp.name:I"}, "p": set()}, target="out_part"),
    C("insert_dynamic_partition", "INSERT INTO out_part PARTITION (p) SELECT id, name, dept FROM emp",
      {"id": {"emp.id:I"}, "name": {"emp.name:I"}, "p": {"emp.dept:I"}}, target="out_part"),
    C("insert_values", "INSERT INTO out2 VALUES ('a', 1.0)", {"a": set(), "b": set()}, target="out2"),
    C("ctas", "CREATE TABLE ctas_t USING parquet AS SELECT dept, avg(salary) AS a FROM emp GROUP BY dept",
      {"dept": {"emp.dept:I"}, "a": {"emp.salary:A"}}, {"emp.dept:GROUP_BY"}, target="ctas_t"),
    C("ctas_hive_format", "CREATE TABLE ctas_h STORED AS PARQUET AS SELECT id, name FROM emp",
      {"id": {"emp.id:I"}, "name": {"emp.name:I"}}, target="ctas_h"),
    C("insert_hive_table", "INSERT INTO hive_emp SELECT id, upper(name) FROM emp",
      {"id": {"emp.id:I"}, "name": {"emp.name:T"}}, target="hive_emp"),
    C("insert_hive_static_partition", "INSERT OVERWRITE TABLE hive_part PARTITION (ds = '2024') SELECT id, name FROM emp",
      {"id": {"emp.id:I"}, "name": {"emp.name:I"}, "ds": set()}, target="hive_part"),
    C("read_hive_table", "SELECT name FROM hive_emp", {"name": {"hive_emp.name:I"}}),
    C("create_view_as", "CREATE VIEW corpus_v2 AS SELECT name, salary * 2 AS s FROM emp",
      {"name": {"emp.name:I"}, "s": {"emp.salary:T"}}, target="corpus_v2"),
    C("insert_overwrite_directory", "INSERT OVERWRITE DIRECTORY '/tmp/airflow-lineage-corpus-dir' USING parquet "
      "SELECT id, name FROM emp", {"id": {"emp.id:I"}, "name": {"emp.name:I"}}, target="path"),
    # -- multi-insert: each insert a write of its own, with its own columns --------------------------------------
    C("multi_insert_two_tables", MI_TWO, {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, target="out2"),
    C("multi_insert_two_tables_second", MI_TWO, {"id": {"emp.id:I"}, "name": {"emp.name:T"}}, target="hive_emp",
      write=1),
    C("multi_insert_alias_where", MI_WHERE, {"a": {"emp.dept:I"}, "b": {"emp.salary:T"}}, {"emp.age:FILTER"},
      target="out2"),
    C("multi_insert_alias_where_second", MI_WHERE, {"id": {"emp.id:I"}, "name": {"emp.name:I"}, "p": {"emp.dept:I"}},
      {"emp.age:FILTER"}, target="out_part", write=1),
    C("multi_insert_after_with", MI_WITH, {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, {"emp.salary:FILTER"},
      target="out2"),
    C("multi_insert_after_with_second", MI_WITH, {"id": {"emp.id:I"}, "name": {"emp.name:I"}}, {"emp.salary:FILTER"},
      target="hive_emp", write=1),
    C("multi_insert_from_set_operation", MI_UNION, {"a": {"emp.name:I", "dept.dname:I"},
      "b": {"emp.dept:T", "dept.region:T"}}, target="out2"),
    C("multi_insert_from_set_operation_second", MI_UNION, {"id": {"emp.name:T", "dept.dname:T"},
      "name": {"emp.dept:I", "dept.region:I"}, "p": set()}, target="out_part", write=1),
    C("multi_insert_one_table_twice", MI_TWICE, {"a": {"emp.name:I"}, "b": {"emp.salary:I"}}, target="out2"),
    C("multi_insert_one_table_twice_second", MI_TWICE, {"a": {"emp.dept:I"}, "b": {"emp.age:I"}}, target="out2",
      write=1),
    C("multi_insert_from_join", MI_JOIN, {"a": {"dept.dname:I"}, "b": {"emp.salary:I"}},
      {"emp.dept:JOIN", "dept.dept:JOIN"}, target="out2"),
    C("multi_insert_from_join_second", MI_JOIN, {"id": {"emp.id:I"}, "name": {"dept.region:I"}},
      {"emp.dept:JOIN", "dept.dept:JOIN"}, target="hive_emp", write=1),
]

# Spark 4 SQL and lakehouse writes; scripts the static extractor must read as the plan does.
from tests.integration.corpus_spark4 import SPARK4_CASES  # noqa: E402
from tests.integration.corpus_static import STATIC_CASES  # noqa: E402

CASES += SPARK4_CASES + STATIC_CASES
