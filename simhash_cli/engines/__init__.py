"""Where the stages run: :mod:`.local` (this machine's processes) or :mod:`.dask` (a Dask
cluster). Both map the same functions of the core and of :mod:`simhash_cli.app.batches`, and
give the same output; neither imports the other."""
