-- Run by the stock SparkSqlOperator (spark-sql): the cleaned orders per city.
INSERT OVERWRITE DIRECTORY '{{ params.out }}/city_totals' USING parquet
SELECT city, sum(amount) AS total, count(order_id) AS orders
FROM parquet.`{{ params.out }}/orders`
GROUP BY city;
