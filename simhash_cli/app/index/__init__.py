"""The ``simhash index`` commands: their requests (:mod:`.request`) and their runs
(:mod:`.run`). What they share with ``dedupe --index`` (documents added to the store and read
back out of it) is :mod:`simhash_cli.app.indexing`; the store itself, the SQLite file, is
:mod:`simhash_cli.index`."""
