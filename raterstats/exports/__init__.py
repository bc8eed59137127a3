"""Annotation tools' exports read as :class:`~raterstats.Ratings`: Label Studio's JSON
export (:func:`read_label_studio`), Mechanical Turk batch results (:func:`read_mturk`) and
wide survey exports from Qualtrics, Google Forms or SurveyMonkey (:func:`read_survey`).

Each reader builds a long table (one rating per row, canonical roles) and validates it
with :func:`raterstats.read_ratings`, so the ratings are ordinary :class:`Ratings`: their
summary counts what the reader left out (cancelled annotations, rejected assignments,
free text) and its first step says how the export was mapped. Every problem, whether of
the export's structure (a missing key, a wrong type, broken JSON) or of its values (a
rating off the scale, a duplicate), is raised at once in one
:class:`~raterstats.RatingsError` that names the export file and the place in it: task
and annotation (Label Studio), CSV row and column (MTurk), row and column header (surveys).

``read_ratings(path, export="label-studio" | "mturk" | "survey", ...)`` calls
:func:`read_export`, which calls the reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from raterstats.exports.common import ExportProblem
from raterstats.exports.label_studio import read_label_studio
from raterstats.exports.mturk import MTURK_ROLES, parse_mturk_time, read_mturk
from raterstats.exports.survey import (
    DEFAULT_SURVEY_PATTERN,
    RATER_COLUMNS,
    SURVEY_METADATA_COLUMNS,
    SURVEY_ROLES,
    read_survey,
)
from raterstats.ratings import Ratings
from raterstats.readers import FileFormat
from raterstats.scales import Scale

#: the exports :func:`read_export` (``read_ratings(export=...)``, ``--export``) reads
EXPORTS = ("label-studio", "mturk", "survey")
#: roles ``columns`` names a data field for in a Label Studio export
LABEL_STUDIO_ROLES = ("item", "system", "question")


def read_export(
    source: Any,
    export: str,
    *,
    columns: Mapping[str, str] | None = None,
    scale: Scale | Mapping[str, Scale] | None = None,
    format: Literal["long", "wide"] = "long",
    raters: Sequence[str] | None = None,
    dimension: str | None = None,
    design: str | None = None,
    missing: Literal["error", "drop"] = "error",
    keep: Sequence[str] = (),
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
) -> Ratings:
    """Read an annotation tool's export with the options of :func:`raterstats.read_ratings`.

    ``columns`` maps roles to the export's names: ``data`` fields for Label Studio
    (item, system, question), CSV columns for MTurk (:data:`MTURK_ROLES`) and surveys
    (:data:`SURVEY_ROLES`). The other options mean what they mean for ``read_ratings``;
    ``format="wide"`` and ``raters`` do not apply (each export has its own shape), nor
    ``missing`` to surveys (an empty cell is not-rated).

    Parameters
    ----------
    source : path or data
        The export file (or, for Label Studio, its tasks; for the CSV exports, a frame).
    export : {"label-studio", "mturk", "survey"}
        Which export.
    columns, scale, format, raters, dimension, design, missing, keep, file_format,
    encoding, name
        As for :func:`raterstats.read_ratings`.

    Returns
    -------
    Ratings

    Raises
    ------
    RatingsError
        Every problem of the export, each at its place in it.
    ValueError
        An unknown export, or an option that does not apply to it.

    Examples
    --------
    >>> import polars as pl
    >>> batch = pl.DataFrame({"WorkerId": ["A1", "A2"], "Input.answer": ["a1", "a1"],
    ...                       "Answer.fluency": ["3", "4"]})
    >>> read_export(batch, "mturk", columns={"item": "Input.answer"}).items
    ('a1',)
    """
    kind = str(export).strip().lower().replace("_", "-")
    if kind == "labelstudio":
        kind = "label-studio"
    if kind not in EXPORTS:
        raise ValueError(f"export must be one of {list(EXPORTS)}, not {export!r}")
    if format != "long":
        raise ValueError(
            f"format={format!r} does not apply to a {kind} export (it has its "
            "own shape); leave it at 'long'"
        )
    if raters is not None:
        raise ValueError(f"raters= does not apply to a {kind} export")
    cols = dict(columns or {})
    if kind == "label-studio":
        unknown = [r for r in cols if r not in LABEL_STUDIO_ROLES]
        if unknown:
            raise ValueError(
                f"columns: a Label Studio export names data fields for "
                f"{list(LABEL_STUDIO_ROLES)} only, not {unknown}"
            )
        if dimension is not None:
            raise ValueError(
                "dimension= does not apply to a Label Studio export: each "
                "control tag (from_name) is a dimension"
            )
        if file_format not in (None, "json"):
            raise ValueError(f"file_format={file_format!r}: a Label Studio export is JSON")
        return read_label_studio(
            source,
            item_field=cols.get("item"),
            system_field=cols.get("system"),
            question_field=cols.get("question"),
            scale=scale,
            design=design,
            missing=missing,
            keep=keep,
            encoding=encoding,
            name=name,
        )
    if kind == "mturk":
        return read_mturk(
            source,
            columns=cols,
            scale=scale,
            dimension=dimension,
            design=design,
            missing=missing,
            keep=keep,
            file_format=file_format,
            encoding=encoding,
            name=name,
        )
    if missing != "error":
        raise ValueError(
            "missing= does not apply to a survey export: an empty cell is "
            "not-rated, counted in the summary"
        )
    return read_survey(
        source,
        columns=cols,
        scale=scale,
        dimension=dimension,
        design=design,
        keep=keep,
        file_format=file_format,
        encoding=encoding,
        name=name,
    )


__all__ = [
    "DEFAULT_SURVEY_PATTERN",
    "EXPORTS",
    "LABEL_STUDIO_ROLES",
    "MTURK_ROLES",
    "RATER_COLUMNS",
    "SURVEY_METADATA_COLUMNS",
    "SURVEY_ROLES",
    "ExportProblem",
    "parse_mturk_time",
    "read_export",
    "read_label_studio",
    "read_mturk",
    "read_survey",
]
