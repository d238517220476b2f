-- DAG B of the demo: a report per company, from the table DAG A (spark_column_lineage_demo) writes.
CREATE TABLE IF NOT EXISTS company_report (company_name STRING, users BIGINT, oldest_birthday TIMESTAMP,
                                           first_day STRING) USING parquet;

INSERT OVERWRITE company_report
SELECT company_name, count(DISTINCT id) AS users, min(birthday) AS oldest_birthday, min(p) AS first_day
FROM dwd_users
GROUP BY company_name;
