#!/usr/bin/env bash
# An interleaved series of benchmarks/peer_run.py (the shared side-by-side harness, a channel per conversation):
#   PEER_DIR=... bash benchmarks/peer_series.sh OUT.jsonl REPS "folio-off folio-on peerfix" "30 10"
# then: python3 ../shared/peer-bench/summarize.py OUT.jsonl. The order of the bots rotates each repetition.
set -u
OUT=$1; REPS=${2:-3}; BOTS=(${3:-folio-off folio-on peerfix}); LEVELS=(${4:-30 10})
PY=${PY:-.venv/bin/python}
for rep in $(seq 1 "$REPS"); do
  for threads in "${LEVELS[@]}"; do
    n=${#BOTS[@]}
    for i in $(seq 0 $((n - 1))); do
      bot=${BOTS[$(((i + rep) % n))]}
      echo "$(date +%H:%M:%S) rep=$rep threads=$threads bot=$bot load=$(cut -d' ' -f1 /proc/loadavg)" >&2
      line=$(timeout 300 "$PY" benchmarks/peer_run.py --bot "$bot" --threads "$threads" --duration 20 | tail -1)
      printf '{"rep": %s, "run": %s}\n' "$rep" "${line:-null}" >>"$OUT"
    done
  done
done
