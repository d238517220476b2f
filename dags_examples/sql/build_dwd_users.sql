-- The two seed statements: one table read, then a join.
INSERT INTO dwd_users
SELECT id, name, name AS company_name, birthday, ts, date_format(birthday, 'yyyyMMdd')
FROM ods_users;

INSERT INTO dwd_users
SELECT a.id, concat(a.name, b.company_name), b.company_name, a.birthday, a.ts, date_format(a.birthday, 'yyyyMMdd')
FROM ods_users a JOIN dim_company b ON a.id = b.user_id;

SELECT p, count(*) AS users FROM dwd_users GROUP BY p ORDER BY p;
