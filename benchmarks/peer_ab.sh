#!/usr/bin/env bash
# Before / after, side by side with the template: interleaved runs of benchmarks/peer_run.py from checkouts of Folio
# (e.g. `git archive abb07df | tar -x -C /tmp/before`, with benchmarks/peer_run.py copied in), the order of the
# checkouts rotated each repetition; peerfix runs once per repetition.
#   bash benchmarks/peer_ab.sh OUT.jsonl 3 "after=/tmp/after before=/tmp/before" "folio-off folio-on peerfix" 30
#   python3 benchmarks/peer_ab_summary.py OUT.jsonl
set -u
OUT=$1; REPS=$2; SNAPS=($3); BOTS=($4); THREADS=$5
export PEER_DIR=${PEER_DIR:?PEER_DIR: the folder make_peer.py prepared}
HERE=$(cd "$(dirname "$0")/.." && pwd)  # this checkout: its venv and ../shared/peer-bench serve every checkout run
PY=${PY:-$HERE/.venv/bin/python}
export PEER_BENCH=${PEER_BENCH:-$HERE/../shared/peer-bench}
for rep in $(seq 1 "$REPS"); do
  for bot in "${BOTS[@]}"; do
    n=${#SNAPS[@]}
    for i in $(seq 0 $((n - 1))); do
      snap=${SNAPS[$(((i + rep) % n))]}; label=${snap%%=*}; dir=${snap#*=}
      if [ "$bot" = peerfix ] && [ "$i" -gt 0 ]; then continue; fi
      echo "$(date +%H:%M:%S) rep=$rep bot=$bot snap=$label load=$(cut -d' ' -f1 /proc/loadavg)" >&2
      line=$(cd "$dir" && timeout 300 "$PY" benchmarks/peer_run.py --bot "$bot" --threads "$THREADS" --duration 20 | tail -1)
      printf '{"rep": %s, "snap": "%s", "run": %s}\n' "$rep" "$label" "${line:-null}" >>"$OUT"
    done
  done
done
