"""The persistent index, the SQLite store alone: the file and its settings (:mod:`.schema`), the
block tables (:mod:`.lists`), the open file (:mod:`.store`), what is read from it
(:mod:`.reading`), what changes it (:mod:`.writing`) and the query (:mod:`.search`). It imports
no application code: the commands that use it are :mod:`simhash_cli.app.index`."""
