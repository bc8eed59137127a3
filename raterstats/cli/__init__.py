"""The ``raterstats`` command line.

Every command that reads ratings takes the same options: the file (or ``data`` in a study
file), ``--column ROLE=COLUMN``, ``--scale SCALE`` or ``--scale DIMENSION=SCALE``,
``--wide``, ``--filter KEY=VALUE``, ``--collapse`` and ``--duplicates``; ``--study
study.toml`` sets them once for a study (options given on the command line win; what
neither gives is the library's default, from :mod:`raterstats.defaults`). Every key of the
study file is checked (:data:`raterstats.cli.studyfile.STUDY_FILE`). A study file::

    data = "ratings.csv"            # relative to the study file
    collapse = "likert5_to_3"       # optional
    scale = "likert5"               # one scale for all dimensions, or a table:

    [columns]                       # role = "column in the file"
    item = "answer_id"
    rater = "annotator"

    [filter]                        # keep only these ratings
    rater_kind = "human"

    [agreement]                     # defaults of `raterstats agreement`
    statistics = ["randolph_kappa", "krippendorff_alpha"]
    by = ["dimension", "design"]

    [fit]                           # defaults of `raterstats fit`
    model = "mace"
    draws = 1000
    use_gold = false                # true: gold labels clamp the labels (default: a check)

    [rank]                          # also [designs]: defaults of those commands
    score_map = "yes_partially_no"

    [analyze]                       # defaults of `raterstats analyze`
    models = ["auto"]
    fit = { ordinal_raters = { method = "map" } }

Examples::

    raterstats demo --out raterstats-report
    raterstats analyze ratings.csv -c rater=annotator -s likert5 --out report
    raterstats validate ratings.csv --column item=answer_id --column rater=annotator \\
        --scale likert5
    raterstats agreement --study study.toml --json
    raterstats fit --study study.toml --model mace --method em --out fit.nc
    raterstats labels --study study.toml --model mace --method em --out labels.csv
    raterstats rank --study study.toml --fit fit.nc --json
    raterstats report raterstats-report --fit MACE=fit.nc
    raterstats analyze rankings.csv --comparisons rankings --out report

Comparative judgments (pairwise preferences, per-question rankings) are read by every data
command with ``--comparisons pairs|rankings`` (and ``--graded K`` for outcomes ``-K..K``):
:mod:`~raterstats.cli.comparison_commands`.

Modules: :mod:`~raterstats.cli.app` (the Typer app and its output),
:mod:`~raterstats.cli.study` (the data options, defined once, and the study file),
:mod:`~raterstats.cli.studyfile` (the study file's schema and the option forms),
:mod:`~raterstats.cli.commands` (the commands), :mod:`~raterstats.cli.labels_command`
(``labels`` and the gold lines of ``fit``), :mod:`~raterstats.cli.analyze_command`
(``analyze``); ``python -m raterstats.cli`` runs it.
Exit status: 0 done, 1 bad data (every problem listed), 2 bad usage, 130 interrupted; an
unexpected error is one line (``RATERSTATS_DEBUG=1`` shows its traceback).
"""

from raterstats.cli import analyze_command as analyze_command  # registers `analyze`
from raterstats.cli import commands as commands  # registers the commands on `app`
from raterstats.cli import labels_command as labels_command  # registers `labels`
from raterstats.cli.app import app


def main() -> None:
    """Entry point of the ``raterstats`` console script."""
    app()


__all__ = ["app", "main"]
