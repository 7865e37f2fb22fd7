#!/usr/bin/env python3
"""Runs SQL queries with Apache Spark (local mode) over a perfscape store directory, reading
its Parquet files unchanged: `spark.read.parquet("DIR/<table>")` for every table.

    python3 scripts/ref/spark_store_queries.py STORE_DIR QUERIES.json

QUERIES.json is a JSON array of SQL strings; prints one JSON array of rows (each an array of
values in column order) per query, one line each. Used by
crates/perfscape-cli/tests/store_spark.rs to check that Spark and `perfscape sql --store`
give the same answers. Needs pyspark and a Java runtime.
"""
import json
import os
import sys

from pyspark.sql import SparkSession

store, queries_file = sys.argv[1], sys.argv[2]
queries = json.load(open(queries_file))

spark = (
    SparkSession.builder.master("local[2]")
    .appName("perfscape-store-check")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
for table in sorted(os.listdir(store)):
    path = os.path.join(store, table)
    if os.path.isdir(path) and not table.startswith((".", "_")):
        spark.read.parquet(path).createOrReplaceTempView(table)

for q in queries:
    rows = [list(r) for r in spark.sql(q).collect()]
    print(json.dumps(rows))
spark.stop()
