"""An index of files as the slices use it (``simhash index ...``, ``dedupe --index``,
``dedupe --against DB``), below them all: ``adding`` (documents into and out of the store),
``updating`` (the index opened and brought up to date from files, how files are read to be
compared with it, and the search on what it stores)."""
