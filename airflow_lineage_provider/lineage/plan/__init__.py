"""Field lineage from Spark's analyzed logical plan: the plan tree, its lean digest, the resolver."""
