"""Where documents come from: files (:mod:`.files`), JSON Lines records (:mod:`.records`) and
Parquet tables (:mod:`.parquet`); :mod:`.dispatch` is the one dispatch between the last two.
Importing the package imports none of them (a command's help reads :mod:`.fields` and
:mod:`.files` alone)."""
