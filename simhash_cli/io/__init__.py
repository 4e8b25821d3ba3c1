"""Where documents come from and where results go.

:mod:`~simhash_cli.io.sources`: paths, standard input, JSON Lines and Parquet -> documents and
records, with the encoding and skip policy. :mod:`~simhash_cli.io.sinks`: results and records ->
table, json, jsonl or csv on standard output or a file written whole, and the messages a person
reads on standard error; the only place that draws with Rich.
"""
