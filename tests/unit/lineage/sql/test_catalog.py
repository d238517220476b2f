"""What the catalog remembers between statements (``Catalog.table``, ``TableInfo.origins``) follows what
the script changes: DDL, USE, a table the schema cache learns."""

from __future__ import annotations

from airflow_lineage_provider.lineage.model import IDENTITY, Origin
from airflow_lineage_provider.lineage.schema_cache import SchemaCache
from airflow_lineage_provider.lineage.sql.catalog import Catalog, TableInfo


def test_a_table_name_follows_use_and_ddl():
    catalog = Catalog(database="a")
    catalog.put(TableInfo("spark_catalog.a.t", [("x", "int")]))
    catalog.put(TableInfo("spark_catalog.b.t", [("y", "int")]))
    name, info, dataset = catalog.table(("", "", "t"))[:3]
    assert (name, info.names, dataset.table) == ("spark_catalog.a.t", ["x"], "spark_catalog.a.t")
    catalog.database = "b"  # USE b
    name, info, _ = catalog.table(("", "", "t"))[:3]
    assert (name, info.names) == ("spark_catalog.b.t", ["y"])
    catalog.put(TableInfo("spark_catalog.b.t", [("y", "int"), ("z", "string")]))  # ALTER TABLE ADD COLUMNS
    assert catalog.table(("", "", "t"))[1].names == ["y", "z"]
    catalog.drop("spark_catalog.b.t")
    assert catalog.table(("", "", "t"))[1] is None


def test_a_table_the_cache_learns_is_found(tmp_path):
    cache = SchemaCache(tmp_path / "schemas.json")
    catalog = Catalog(cache=cache)
    assert catalog.table(("", "db", "t"))[1] is None
    cache.put("spark_catalog.db.t", [("c", "int")])
    assert catalog.table(("", "db", "t"))[1].names == ["c"]


def test_origins_name_the_column_as_the_table_stores_it():
    info = TableInfo("spark_catalog.db.t", [("Amount", "int")])
    assert info.origins("spark_catalog.db.t", "amount") == {Origin("spark_catalog.db.t", "Amount", IDENTITY, "", False)}
    assert info.origins("spark_catalog.db.t", "missing") is None
    info.columns = [("Amount", "int"), ("Extra", "int")]  # a new column list is read afresh
    assert info.origins("spark_catalog.db.t", "EXTRA") == {Origin("spark_catalog.db.t", "Extra", IDENTITY, "", False)}


def test_spellings_give_each_name_its_one_case_and_follow_the_ddl(tmp_path):
    catalog = Catalog()
    catalog.put(TableInfo("spark_catalog.default.a", [("ID", "int"), ("name", "string")]))
    catalog.put(TableInfo("spark_catalog.default.b", [("ID", "int"), ("Name", "string"), ("x", "int")]))
    assert catalog.spellings() == {"id": "ID", "name": "", "x": "x"}  # "": two tables spell it two ways
    catalog.drop("spark_catalog.default.b")
    assert catalog.spellings() == {"id": "ID", "name": "name"}
    catalog.put(TableInfo("spark_catalog.default.a", [("Id", "int")]))  # ALTER TABLE, CREATE OR REPLACE
    assert catalog.spellings() == {"id": "Id"}
    # A cache may learn a table between two statements with no DDL: no spelling can be ruled out.
    assert Catalog(cache=SchemaCache(tmp_path / "schemas.json")).spellings() is None


def test_a_table_name_means_what_a_resolver_reads_of_it():
    """A plain table's name brings the origins the table made so far (``origins_made``): the same dict while
    the table is the same, a new one when DDL puts a new table; a view's and an unknown table's none."""
    catalog = Catalog(database="a")
    catalog.put(TableInfo("spark_catalog.a.t", [("X", "int")]))
    named = catalog.table(("", "", "t"))
    assert (named.plain, named.label) == (True, "spark_catalog.a.t")
    assert named.info.origins(named.label, "x") == named.made["x"] == {Origin("spark_catalog.a.t", "X", IDENTITY, "", False)}
    assert catalog.table(("", "", "t")).made is named.made
    catalog.put(TableInfo("spark_catalog.a.t", [("y", "int")]))  # ALTER TABLE ...: a new table
    again = catalog.table(("", "", "t"))
    assert again.made is not named.made and not again.made and again.info.origins(again.label, "x") is None
    catalog.put(TableInfo("spark_catalog.a.v", [("x", "int")], view=object()))
    assert catalog.table(("", "", "v"))[3:] == (False, "spark_catalog.a.v", None)
    assert catalog.table(("", "", "nope"))[3:] == (False, "spark_catalog.a.nope", None)
