"""Where results go: records (:mod:`.records`) in a format (:mod:`.formats`), on standard
output or a file written whole (:mod:`.atomic`); tables for a terminal (:mod:`.tables`) and the
messages of standard error (:mod:`.messages`). The only place that imports Rich.
"""
