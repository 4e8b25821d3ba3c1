"""The ``simhash index`` commands and ``dedupe --index``: their requests (:mod:`.request`),
documents added to the store and read back out of it (:mod:`.adding`), and their runs
(:mod:`.run`). The store itself, the SQLite file, is :mod:`simhash_cli.index`."""
