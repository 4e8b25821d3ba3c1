"""The persistent index: fingerprints in one SQLite file (:mod:`.store`), and documents added to
it and read back out of it (:mod:`.adding`): files are read again only when they changed."""
