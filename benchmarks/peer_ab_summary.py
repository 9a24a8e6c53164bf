"""Tables from benchmarks/peer_ab.sh's output: per (threads, variant) the median (min-max) over repetitions, and
ratios paired by repetition against peerfix and against the `before` snapshot.

    python3 benchmarks/peer_ab_summary.py OUT.jsonl [OUT2.jsonl ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

KEYS = [
    ("main_cpu_ms_per_turn", "CPU ms/turn", "{:.1f}"),
    ("ack_p50_ms", "ack p50 ms", "{:.1f}"),
    ("ack_p99_ms", "ack p99 ms", "{:.1f}"),
    ("turns_per_s", "turns/s", "{:.1f}"),
    ("overhead_ratio", "overhead", "{:.2f}"),
    ("slack_calls_per_turn", "Slack calls/turn", "{:.2f}"),
]


def mmm(values: list[float], fmt: str) -> str:
    if not values:
        return "-"
    med = fmt.format(statistics.median(values))
    return med if len(values) == 1 else f"{med} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main(paths: list[str]) -> None:
    runs: dict[tuple[int, str], dict[int, dict]] = defaultdict(dict)
    for path in paths:
        for line in open(path):
            row = json.loads(line)
            run = row["run"]
            if run is None:
                continue
            name = "peerfix" if run["bot"] == "peerfix" else f"{run['bot']} {row['snap']}"
            runs[(run["threads"], name)][row["rep"]] = run
    for threads in sorted({t for t, _ in runs}):
        names = sorted(name for t, name in runs if t == threads)
        print(
            f"\n### {threads} threads\n\n| metric | "
            + " | ".join(f"{n} (n={len(runs[(threads, n)])})" for n in names)
            + " |\n|---|"
            + "---|" * len(names)
        )
        for key, label, fmt in KEYS:
            cells = [mmm([r[key] for r in runs[(threads, n)].values() if r[key] is not None], fmt) for n in names]
            print(f"| {label} | " + " | ".join(cells) + " |")
        loads = [
            ", ".join(f"{runs[(threads, n)][k]['load_before'][0]:.1f}" for k in sorted(runs[(threads, n)]))
            for n in names
        ]
        print(
            "| errors | " + " | ".join(str(sum(r["errors"] for r in runs[(threads, n)].values())) for n in names) + " |"
        )
        print("| 1-min load before (each rep) | " + " | ".join(loads) + " |")
        print(
            "\nPaired by repetition, median (min-max):\n\n| ratio | CPU/turn | ack p99 | overhead |\n|---|---|---|---|"
        )
        pairs = [(a, "peerfix") for a in names if a != "peerfix"]
        pairs += [(f"{bot} after", f"{bot} before") for bot in ("folio-off", "folio-on")]
        for a, b in pairs:
            if (threads, a) not in runs or (threads, b) not in runs:
                continue
            cells = []
            for key, _, _ in (KEYS[0], KEYS[2], KEYS[4]):
                both = [
                    (runs[(threads, a)][k][key], runs[(threads, b)][k][key])
                    for k in runs[(threads, a)]
                    if k in runs[(threads, b)]
                ]
                cells.append(mmm([x / y for x, y in both if x is not None and y], "{:.2f}"))
            print(f"| {a} / {b} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
