"""Convert SQuALITY's human evaluation (``data/human-eval/all-responses.jsonl`` of
https://github.com/nyu-mll/SQuALITY) into one long CSV of per-question rankings and ratings.

Usage::

    python convert.py path/to/all-responses.jsonl            # writes rankings.csv here
    python convert.py path/to/all-responses.jsonl --out x.csv

One output row per (passage, question, worker, system, dimension): the rank (1 = best) the
worker gave the system's response among the responses to that question, and the 0-100
rating the same worker gave the same response on the same dimension. No text (story,
question, response or annotation) is written. Every review in the input becomes three rows;
a missing rank or rating is written as an empty cell and counted, never dropped. The script
prints the checks reported in README.md.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

DIMENSIONS = ("correctness", "selection", "overall")
COLUMNS = ("question", "rater", "system", "dimension", "rank", "rating")


def _number(value):
    """An int when the value is integral, else the value (None stays None)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def convert(source: Path) -> tuple[list[dict], dict]:
    rows: list[dict] = []
    facts: Counter = Counter(
        dict.fromkeys(
            ("reviews", "review system differs from its key", "missing rank", "missing rating"), 0
        )
    )
    passages = []
    with source.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            passage = str(record["passage-id"])
            passages.append(passage)
            for q_index, systems in record["questions"].items():
                question = f"{passage}/{q_index}"
                for system, block in systems.items():
                    for review in block["reviews"]:
                        facts["reviews"] += 1
                        if review.get("system", system) != system:
                            facts["review system differs from its key"] += 1
                        rater = f"w{review['worker_id']}"
                        for dim in DIMENSIONS:
                            rank = _number(review.get(f"{dim}-rank"))
                            rating = _number(review.get(f"{dim}-rating"))
                            facts["missing rank"] += rank is None
                            facts["missing rating"] += rating is None
                            rows.append(
                                {
                                    "question": question,
                                    "rater": rater,
                                    "system": system,
                                    "dimension": dim,
                                    "rank": rank,
                                    "rating": rating,
                                }
                            )
    facts["passages"] = len(passages)
    facts["duplicate passages"] = len(passages) - len(set(passages))
    return rows, dict(facts)


def check(rows: list[dict]) -> dict:
    """Counts and consistency checks of the rankings (reported in README.md)."""
    rankings: dict[tuple, dict[str, tuple]] = defaultdict(dict)
    for r in rows:
        rankings[(r["question"], r["rater"], r["dimension"])][r["system"]] = (
            r["rank"],
            r["rating"],
        )
    systems = sorted({r["system"] for r in rows})
    out: Counter = Counter(
        dict.fromkeys(
            (
                "rankings with tied ranks",
                "rankings whose ranks are not 1..m",
                "pairs with tied ranks",
                "pairs with equal ratings but different ranks",
                "pairs ranked against their ratings",
                "rankings with a pair ranked against its ratings",
            ),
            0,
        )
    )
    out["rows"] = len(rows)
    out["questions"] = len({r["question"] for r in rows})
    out["workers"] = len({r["rater"] for r in rows})
    out["systems"] = len(systems)
    out["rankings"] = len(rankings)
    for ranking in rankings.values():
        out["rankings of every system"] += sorted(ranking) == systems
        ranks = [v[0] for v in ranking.values() if v[0] is not None]
        if len(set(ranks)) < len(ranks):
            out["rankings with tied ranks"] += 1
        if sorted(ranks) != list(range(1, len(ranks) + 1)):
            out["rankings whose ranks are not 1..m"] += 1
        for (ra, sa), (rb, sb) in combinations(ranking.values(), 2):
            if None in (ra, rb, sa, sb):
                continue
            out["pairs"] += 1
            if ra == rb:
                out["pairs with tied ranks"] += 1
            elif sa == sb:
                out["pairs with equal ratings but different ranks"] += 1
            elif (ra < rb) != (sa > sb):
                out["pairs ranked against their ratings"] += 1
        orders = [v for v in ranking.values() if None not in v]
        if any(
            (ra < rb and sa < sb) or (ra > rb and sa > sb)
            for (ra, sa), (rb, sb) in combinations(orders, 2)
        ):
            out["rankings with a pair ranked against its ratings"] += 1
    return dict(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="SQuALITY's all-responses.jsonl")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "rankings.csv",
        help="output CSV (default: rankings.csv beside this script)",
    )
    args = parser.parse_args()
    rows, facts = convert(args.source)
    with args.out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    for key, value in {**facts, **check(rows)}.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
