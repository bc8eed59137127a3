"""The fingerprint of a fit's data (``dt.attrs["data_fingerprint"]``): a SHA-256 of the
ratings' or comparisons' content, independent of row order (moved out of
:mod:`raterstats.models.base`, which re-exports it).

Every row is written as one string, its fields (cast to text) joined by a unit separator
(``\\x1f``) with ``\\x00`` for a missing value; the rows are sorted and the SHA-256 is taken of
their bytes in that order, read from the sorted column's Arrow buffer. Where a value itself
holds one of those two characters, each field is written with its length in front instead,
so that the encoding stays one to one. Fits saved by raterstats before 2026-11-30 hold the
fingerprint of an earlier encoding (the sorted rows written as CSV);
:func:`fingerprint_matches` accepts either.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future

import numpy as np
import polars as pl
import pyarrow as pa

from raterstats import schema as S
from raterstats.comparisons import Comparisons
from raterstats.ratings import Ratings

_SEP = "\x1f"
_NULL = "\x00"


def _header_and_frame(ratings: Ratings | Comparisons) -> tuple[str, pl.DataFrame]:
    """The text that heads the hash (what the rows cannot say: the columns, the scales or
    the comparisons' kind) and the columns that are hashed, as text."""
    if isinstance(ratings, Comparisons):
        frame = ratings.data.drop(S.ROW)
        frame = frame.select([pl.col(c).cast(pl.String) for c in frame.columns])
        return f"{ratings.kind},{ratings.max_grade},{','.join(frame.columns)}", frame
    cols = [
        c
        for c in (S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN, S.RATING, S.REPEAT, S.GOLD)
        if c in ratings.data.columns
    ]
    frame = ratings.data.select([pl.col(c).cast(pl.String) for c in cols])
    scales = json.dumps({d: repr(s) for d, s in ratings.scales.items()})
    return f"{','.join(cols)}\n{scales}", frame


def _sorted_rows(frame: pl.DataFrame) -> pa.Array:
    """Every row of ``frame`` (string columns) as one string, one to one, sorted."""
    special = frame.select(
        pl.any_horizontal(pl.col(c).str.contains_any([_SEP, _NULL]).any() for c in frame.columns)
    ).item()
    if special:  # length-prefixed fields: slower, but one to one whatever the values hold
        fields = [
            pl.when(pl.col(c).is_null())
            .then(pl.lit("n"))
            .otherwise(pl.concat_str(pl.col(c).str.len_bytes().cast(pl.String), pl.lit(":"), c))
            for c in frame.columns
        ]
    else:
        fields = [pl.col(c).fill_null(_NULL) for c in frame.columns]
    rows = frame.select(pl.concat_str(fields, separator=_SEP).alias("_row")).get_column("_row")
    arrow = rows.sort().to_arrow(compat_level=pl.CompatLevel.oldest())
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    return arrow.cast(pa.large_string())


def data_fingerprint(ratings: Ratings | Comparisons) -> str:
    """A SHA-256 fingerprint of the ratings' content (order-independent).

    Two :class:`~raterstats.Ratings` with the same ratings (same items, segments, raters,
    dimensions, designs, levels, repeats and gold labels) have the same fingerprint; so do
    two :class:`~raterstats.Comparisons` with the same judgments.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> data_fingerprint(r) == data_fingerprint(r.filter(dimension=list(r.dimensions)))
    True
    """
    header, frame = _header_and_frame(ratings)
    h = hashlib.sha256()
    h.update(header.encode())
    if frame.height:
        rows = _sorted_rows(frame)
        offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)
        start, end = int(offsets[rows.offset]), int(offsets[rows.offset + len(rows)])
        h.update(b"\n")
        ends = offsets[rows.offset : rows.offset + len(rows) + 1] - start  # the rows' ends
        h.update(ends.astype("<i8", copy=False))  # little-endian on every machine
        h.update(memoryview(rows.buffers()[2])[start:end])
    return h.hexdigest()


def csv_fingerprint(ratings: Ratings | Comparisons) -> str:
    """The fingerprint that fits saved before 2026-11-30 hold: the SHA-256 of the rows,
    sorted and written as CSV (about twice as slow as :func:`data_fingerprint`).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> len(csv_fingerprint(r)) == len(data_fingerprint(r)) == 64
    True
    """
    frame = _header_and_frame(ratings)[1]
    rows = frame.sort(frame.columns).write_csv().encode()
    h = hashlib.sha256()
    if isinstance(ratings, Comparisons):
        h.update(f"{ratings.kind},{ratings.max_grade},{','.join(frame.columns)}".encode())
        h.update(rows)
        return h.hexdigest()
    h.update(",".join(frame.columns).encode())
    h.update(rows)
    h.update(json.dumps({d: repr(s) for d, s in ratings.scales.items()}).encode())
    return h.hexdigest()


def fingerprint_matches(stored: str, ratings: Ratings | Comparisons) -> bool:
    """Whether a fit's stored ``data_fingerprint`` is that of ``ratings``, in the current
    encoding or in that of fits saved before 2026-11-30 (:func:`csv_fingerprint`).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> fingerprint_matches(csv_fingerprint(r), r), fingerprint_matches("0" * 64, r)
    (True, False)
    """
    return stored == data_fingerprint(ratings) or stored == csv_fingerprint(ratings)


def fingerprint_later(ratings: Ratings | Comparisons) -> Future[str]:
    """:func:`data_fingerprint` computed on a background thread, for a fit to read when it
    stores its attributes: polars' work and the hashing release the GIL, so on a large data
    set (1.5 million ratings: about 0.2 s) it runs beside the fit instead of after it.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> fingerprint_later(r).result() == data_fingerprint(r)
    True
    """
    future: Future[str] = Future()

    def work() -> None:
        try:
            future.set_result(data_fingerprint(ratings))
        except BaseException as err:  # handed to whoever reads the result
            future.set_exception(err)

    threading.Thread(target=work, name="raterstats-fingerprint", daemon=True).start()
    return future


__all__ = ["csv_fingerprint", "data_fingerprint", "fingerprint_later", "fingerprint_matches"]
