"""The dask engine: the same stages on a Dask cluster (the ``distributed`` extra)."""
