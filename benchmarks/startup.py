"""Benchmark: start-up time of ``import raterstats`` and of the command line (issue 22:
both under 2 s), and the demo's whole run (issue 22: under 90 s after set-up).

Each start-up measurement is a fresh Python process (``python -c "import raterstats"``,
``raterstats --help`` through ``python -m raterstats.cli``), timed from outside: the
median and the best of ``--repeats`` runs after one warm-up run (which fills the operating
system's file cache). The demo (``--demo``) runs ``raterstats demo`` once in a fresh
process and reports its wall time and every fit's health line from the report. Each row
records the 1-minute load average at its start (2 cores: above 2, other processes competed
for the CPU). Writes the section between ``<!-- startup:start -->`` and
``<!-- startup:end -->`` of ``benchmarks/RESULTS.md``.

Run:  python benchmarks/startup.py [--repeats 7] [--demo]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START, END = "<!-- startup:start -->", "<!-- startup:end -->"
REPRODUCE = "python benchmarks/startup.py --demo"
COMMANDS = {
    "import raterstats": [sys.executable, "-c", "import raterstats"],
    "raterstats --help": [sys.executable, "-m", "raterstats.cli", "--help"],
}


def timed(cmd: list[str]) -> float:
    """Wall seconds of one fresh process running ``cmd`` (it must succeed)."""
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t


def startup_rows(repeats: int) -> list[dict[str, object]]:
    """Median and best wall time of each start-up command."""
    rows = []
    for name, cmd in COMMANDS.items():
        timed(cmd)
        load = os.getloadavg()[0]
        times = [timed(cmd) for _ in range(repeats)]
        rows.append(
            {
                "what": name,
                "median": statistics.median(times),
                "best": min(times),
                "repeats": repeats,
                "load": load,
            }
        )
    return rows


def demo_row() -> dict[str, object]:
    """Wall time of ``raterstats demo`` in a fresh process, and its fits' health lines."""
    out = Path(tempfile.mkdtemp(prefix="raterstats-demo-"))
    load = os.getloadavg()[0]
    cmd = [sys.executable, "-m", "raterstats.cli", "demo", "--out", str(out)]
    seconds = timed(cmd)
    report = (out / "report.md").read_text()
    health = re.findall(r"^(?:NUTS|Gibbs|MAP|ADVI|EM)[^\n]*convergence checks[^\n]*", report, re.M)
    return {"seconds": seconds, "load": load, "load_end": os.getloadavg()[0], "health": health}


def write(rows: list[dict[str, object]], demo: dict[str, object] | None) -> None:
    import raterstats

    lines = [
        START,
        "## Start-up and the demo",
        "",
        "Written by `benchmarks/startup.py` (rerun it; do not edit by hand).",
        "",
        f"- date: {_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"raterstats {raterstats.__version__}",
        f"- reproduce: `{REPRODUCE}`",
        "- each figure is a fresh process timed from outside, after one warm-up run; load = "
        "1-minute load average at the start",
        "",
        "| what | median (s) | best (s) | runs | load | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        ok = "met" if float(r["median"]) < 2.0 else "**NOT met**"  # type: ignore[arg-type]
        lines.append(
            f"| {r['what']} | {r['median']:.2f} | {r['best']:.2f} | {r['repeats']} | "
            f"{r['load']:.1f} | < 2 s: {ok} |"
        )
    if demo is not None:
        secs = float(demo["seconds"])  # type: ignore[arg-type]
        ok = "met" if secs <= 90 else "**NOT met**"
        lines.append(
            f"| `raterstats demo` (whole run) | {secs:.1f} | {secs:.1f} | 1 | "
            f"{demo['load']:.1f} | <= 90 s: {ok} |"
        )
        lines += ["", "The demo's fits, as its report states them:", ""]
        lines += [f"- {h}" for h in demo["health"]]  # type: ignore[union-attr]
    lines += ["", END]
    path = HERE / "RESULTS.md"
    text = path.read_text()
    section = "\n".join(lines)
    if START in text:
        pattern = re.escape(START) + r".*?" + re.escape(END)
        text = re.sub(pattern, lambda _m: section, text, count=1, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--demo", action="store_true", help="also time the whole demo")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = startup_rows(args.repeats)
    for r in rows:
        print(r, flush=True)
    demo = demo_row() if args.demo else None
    if demo is not None:
        print(demo, flush=True)
    if not args.no_write:
        write(rows, demo)


if __name__ == "__main__":
    main()
