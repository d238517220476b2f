-- Seed tables of the demo: two sources and one target, with a few rows.
DROP TABLE IF EXISTS ods_users;
DROP TABLE IF EXISTS dim_company;
DROP TABLE IF EXISTS dwd_users;
CREATE TABLE ods_users (id BIGINT, name STRING, birthday TIMESTAMP, ts TIMESTAMP) USING parquet;
CREATE TABLE dim_company (user_id BIGINT, company_name STRING) USING parquet;
CREATE TABLE dwd_users (id BIGINT, name STRING, company_name STRING, birthday TIMESTAMP, ts TIMESTAMP, p STRING)
USING parquet PARTITIONED BY (p);
INSERT INTO ods_users VALUES
  (1, 'Ann', TIMESTAMP '1990-01-02 00:00:00', TIMESTAMP '{{ ds }} 08:00:00'),
  (2, 'Bob', TIMESTAMP '1985-07-14 00:00:00', TIMESTAMP '{{ ds }} 09:30:00');
INSERT INTO dim_company VALUES (1, 'Acme; Inc.'), (2, 'Globex');
