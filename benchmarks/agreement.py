"""Time raterstats' agreement statistics against statsmodels and the krippendorff package.

Fleiss' kappa, Randolph's kappa and Krippendorff's alpha (nominal and interval) at 1,000,
100,000 and 1,000,000 ratings (items x 5 raters, 5 categories; the largest is 200,000 items),
each computed by every package from the same raw items x raters matrix in one run, plus the
1,000-replicate item bootstrap of alpha at 100,000 ratings. Writes the table (medians) to
``benchmarks/RESULTS.md``.

Run::

    .venv/bin/python benchmarks/agreement.py            # full run, writes RESULTS.md
    .venv/bin/python benchmarks/agreement.py --quick    # smaller, prints only

The comparators (``statsmodels``, ``krippendorff``) are not dependencies of raterstats; a
comparator that cannot be imported is skipped with a message in the table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from raterstats.agreement import (
    agreement,
    fleiss_kappa,
    krippendorff_alpha,
    randolph_kappa,
)

N_RATERS = 5
CATEGORIES = np.arange(1, 6)


def make_data(n_ratings: int, seed: int = 2024) -> np.ndarray:
    """Items x 5 raters on 1..5: each rater copies a latent true category with prob. 0.6."""
    rng = np.random.default_rng(seed)
    n_items = n_ratings // N_RATERS
    truth = rng.integers(1, 6, n_items)
    noise = rng.integers(1, 6, (n_items, N_RATERS))
    keep = rng.random((n_items, N_RATERS)) < 0.6
    return np.where(keep, truth[:, None], noise).astype(np.float64)


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time over ``repeats`` runs after one warm-up, and the value."""
    value = fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def comparators() -> tuple[dict[str, Callable[..., Any]], list[str]]:
    found: dict[str, Callable[..., Any]] = {}
    notes = []
    try:
        from statsmodels.stats.inter_rater import aggregate_raters
        from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

        def sm(x: np.ndarray, method: str) -> float:
            table, _ = aggregate_raters(x.astype(np.int64), n_cat=None)
            return float(sm_fleiss(table, method=method))

        found["statsmodels"] = sm
    except ImportError as err:
        notes.append(f"statsmodels not importable ({err}); its columns are skipped.")
    try:
        import krippendorff

        def kr(x: np.ndarray, level: str) -> float:
            return float(
                krippendorff.alpha(
                    reliability_data=x.T, level_of_measurement=level, value_domain=CATEGORIES
                )
            )

        found["krippendorff"] = kr
    except ImportError as err:
        notes.append(f"krippendorff not importable ({err}); its columns are skipped.")
    return found, notes


def version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(sizes: list[int], repeats_for: Callable[[int], int], n_boot: int, boot_size: int):
    found, notes = comparators()
    rows = []
    for n in sizes:
        x = make_data(n)
        reps = repeats_for(n)
        cases: list[tuple[str, Callable[[], Any], str | None, Callable[[], Any] | None]] = [
            (
                "Fleiss' kappa",
                lambda x=x: fleiss_kappa(x),
                "statsmodels",
                (lambda x=x: found["statsmodels"](x, "fleiss")) if "statsmodels" in found else None,
            ),
            (
                "Randolph's kappa",
                lambda x=x: randolph_kappa(x, categories=CATEGORIES.tolist()),
                "statsmodels",
                (lambda x=x: found["statsmodels"](x, "randolph"))
                if "statsmodels" in found
                else None,
            ),
            (
                "Krippendorff's alpha, nominal",
                lambda x=x: krippendorff_alpha(x, level="nominal"),
                "krippendorff",
                (lambda x=x: found["krippendorff"](x, "nominal"))
                if "krippendorff" in found
                else None,
            ),
            (
                "Krippendorff's alpha, interval",
                lambda x=x: krippendorff_alpha(x, level="interval"),
                "krippendorff",
                (lambda x=x: found["krippendorff"](x, "interval"))
                if "krippendorff" in found
                else None,
            ),
        ]
        for label, ours, other_name, other in cases:
            t_ours, v_ours = timed(ours, reps)
            if other is not None:
                t_other, v_other = timed(other, reps)
                diff = abs(v_ours - v_other)
            else:
                t_other, v_other, diff = float("nan"), float("nan"), float("nan")
            rows.append(
                {
                    "statistic": label,
                    "ratings": n,
                    "items": n // N_RATERS,
                    "ours_s": t_ours,
                    "other": other_name if other is not None else f"{other_name} (skipped)",
                    "other_s": t_other,
                    "value": v_ours,
                    "abs_diff": diff,
                    "repeats": reps,
                }
            )
            print(
                f"{label:32s} {n:>9,d}  raterstats {t_ours:8.4f} s   "
                f"{other_name} {t_other:8.4f} s   |diff| {diff:.1e}",
                flush=True,
            )
    boot_rows = []
    xb = make_data(boot_size, seed=7)
    for level in ("nominal", "interval"):
        t_boot, ds = timed(
            lambda level=level: agreement(
                xb,
                [("krippendorff_alpha", {"level": level})],
                n_boot=n_boot,
                random_seed=1,
            ),
            3,
        )
        boot_rows.append(
            {
                "level": level,
                "ratings": boot_size,
                "n_boot": n_boot,
                "seconds": t_boot,
                "estimate": float(ds["estimate"].item()),
                "ci": (float(ds["ci_low"].item()), float(ds["ci_high"].item())),
            }
        )
        print(
            f"bootstrap alpha {level}: {n_boot} replicates on {boot_size:,d} ratings "
            f"{t_boot:.3f} s",
            flush=True,
        )
    return rows, boot_rows, notes


def to_markdown(rows, boot_rows, notes) -> str:
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 0
    lines = [
        "# Agreement benchmarks",
        "",
        "Written by `benchmarks/agreement.py` (do not edit by hand; rerun it).",
        "",
        "- reproduce: `python benchmarks/agreement.py` (`pip install -e .[bench]` brings "
        "statsmodels and krippendorff)",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {cpu_model()}, {cores} cores available, {platform.system()} "
        f"{platform.release()} ({platform.machine()}); OMP_NUM_THREADS={threads}",
        f"- Python {sys.version.split()[0]}; raterstats {version('raterstats')}, "
        f"numpy {np.__version__}, scipy {version('scipy')}, statsmodels "
        f"{version('statsmodels')}, krippendorff {version('krippendorff')}",
        "- data: items x 5 raters, categories 1..5 (each rating copies a latent category "
        "with probability 0.6, else uniform), complete; every package gets the same raw "
        "matrix (statsmodels: `aggregate_raters` + `fleiss_kappa`; krippendorff: "
        "`alpha(reliability_data=x.T, value_domain=1..5)`)",
        "- times: median wall-clock seconds over the stated repeats after one warm-up, "
        "end to end from the raw matrix",
        "",
        "| statistic | ratings | items | raterstats (s) | comparator | comparator (s) | "
        "speed-up | value | abs. difference | repeats |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        speed = r["other_s"] / r["ours_s"] if np.isfinite(r["other_s"]) else float("nan")
        lines.append(
            f"| {r['statistic']} | {r['ratings']:,} | {r['items']:,} | {r['ours_s']:.4f} | "
            f"{r['other']} | {r['other_s']:.4f} | {speed:.1f}x | {r['value']:.6f} | "
            f"{r['abs_diff']:.1e} | {r['repeats']} |"
        )
    lines += [
        "",
        "## Bootstrap",
        "",
        "Item-level bootstrap of Krippendorff's alpha through `agreement()` (percentile "
        "interval, all replicates vectorised), median of 3 runs:",
        "",
        "| level | ratings | replicates | seconds | estimate | 95% interval |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for b in boot_rows:
        lines.append(
            f"| {b['level']} | {b['ratings']:,} | {b['n_boot']:,} | {b['seconds']:.3f} | "
            f"{b['estimate']:.4f} | [{b['ci'][0]:.4f}, {b['ci'][1]:.4f}] |"
        )
    largest = max(r["ratings"] for r in rows)
    big = [r for r in rows if r["ratings"] == largest]
    lines += [
        "",
        "## Targets",
        "",
        f"- each statistic under 0.5 s at {largest:,} ratings: "
        + ("met" if all(r["ours_s"] < 0.5 for r in big) else "NOT met")
        + f" (slowest {max(r['ours_s'] for r in big):.3f} s)",
        "- no slower than the comparators at every size: "
        + (
            "met"
            if all(not np.isfinite(r["other_s"]) or r["ours_s"] <= r["other_s"] for r in rows)
            else "NOT met"
        ),
        "- bootstrap of alpha, 1,000 replicates at 100,000 ratings, under 10 s: "
        + ("met" if all(b["seconds"] < 10 for b in boot_rows) else "NOT met"),
    ]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print only")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    if args.quick:
        rows, boot_rows, notes = run([1_000, 10_000], lambda n: 3, 100, 10_000)
        print(to_markdown(rows, boot_rows, notes))
        return 0
    rows, boot_rows, notes = run(
        [1_000, 100_000, 1_000_000],
        lambda n: 21 if n <= 1_000 else 7 if n <= 100_000 else 5,
        1_000,
        100_000,
    )
    args.out.write_text(to_markdown(rows, boot_rows, notes))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
