"""Distinct values and rows by one sort: the arrays ``np.unique`` gives, for every shape the
search makes (empty, one value, repeats, negatives, wide values, pairs of rows)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from simhash_cli.core.distinct import distinct, distinct_rows

integers = st.sampled_from([np.int64, np.int32, np.uint64])


@given(dtype=integers, data=st.data())
def test_distinct_values_are_numpys(dtype: type, data: st.DataObject) -> None:
    values = data.draw(
        hnp.arrays(dtype, st.integers(0, 200), elements=hnp.from_dtype(np.dtype(dtype)))
    )
    got = distinct(values)
    assert got.dtype == values.dtype
    assert np.array_equal(got, np.unique(values))


@given(
    data=st.data(),
    columns=st.integers(1, 3),
    high=st.sampled_from([3, 1000, 2**31, 2**62]),
    low=st.sampled_from([0, -5]),
)
def test_distinct_rows_are_numpys(data: st.DataObject, columns: int, high: int, low: int) -> None:
    rows = data.draw(
        hnp.arrays(np.int64, st.tuples(st.integers(0, 100), st.just(columns)),
                   elements=st.integers(low, high))
    )  # fmt: skip
    got = distinct_rows(rows)
    assert got.dtype == rows.dtype and got.shape[1:] == rows.shape[1:]
    assert np.array_equal(got, np.unique(rows, axis=0))
