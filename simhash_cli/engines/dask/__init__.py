"""The dask engine: the same stages on a Dask cluster (the ``distributed`` extra). :mod:`.cluster`
connects and maps batches, :mod:`.reading` reads on the workers, :mod:`.search` shuffles and
searches the buckets, :mod:`.engine` is what the application sees."""
