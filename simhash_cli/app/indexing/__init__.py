"""An index of files as the slices use it (``simhash index ...``, ``dedupe --index``,
``dedupe --against DB``), below them all: ``adding`` (documents into and out of the store),
``again`` (the index kept up to date from files, and stored files read again for their
vectors)."""
