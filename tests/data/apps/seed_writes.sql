DROP DATABASE IF EXISTS seed CASCADE;
CREATE DATABASE seed;
CREATE TABLE seed.orders USING parquet AS SELECT id, id % 3 AS cust, CAST(id * 1.5 AS DOUBLE) AS amount, CAST(id % 4 AS INT) AS qty FROM range(12);
CREATE TABLE seed.custs USING parquet AS SELECT id AS cid, concat('r', CAST(id AS STRING)) AS region FROM range(3);
CREATE TABLE seed.totals (region STRING, total DOUBLE, n BIGINT) USING parquet;
INSERT INTO seed.totals SELECT c.region, sum(o.amount * o.qty), count(*) FROM seed.orders o JOIN seed.custs c ON o.cust = c.cid GROUP BY c.region;
CREATE TABLE seed.ranked USING parquet AS WITH r AS (SELECT id, cust, amount, rank() OVER (PARTITION BY cust ORDER BY amount DESC) AS rk FROM seed.orders) SELECT id, cust, upper(CAST(amount AS STRING)) AS amount_text, rk FROM r WHERE rk <= 2;
CREATE VIEW seed.big_orders (order_id, value) AS SELECT id, amount * qty AS v FROM seed.orders WHERE qty > 1;
CREATE TABLE seed.parts (id BIGINT, amount DOUBLE, day STRING) USING parquet PARTITIONED BY (day);
INSERT OVERWRITE seed.parts PARTITION (day = '2026-11-26') SELECT id, amount FROM seed.orders WHERE cust = 1;
INSERT OVERWRITE DIRECTORY '${out}/dir_export' USING parquet SELECT cust, max(amount) AS top FROM seed.orders GROUP BY cust
