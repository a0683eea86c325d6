#!/usr/bin/env bash
# Regenerates the README's demo: docs/demo.cast (asciicast v2) and
# docs/demo.svg (animated, by svg-term-cli), recorded through locklab's own
# view from the event logs in docs/demo/. With --fresh it runs the scenarios
# again first (new races, new logs); without it the same logs give the same
# recording, byte for byte.
#
#   scripts/demo.sh            # re-record from docs/demo/*.jsonl
#   scripts/demo.sh --fresh    # run the scenarios again, then record
#
# Needs Go and Node.js (npx fetches svg-term-cli).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)/locklab
go build -o "$bin" .

# The flagship scenarios, each with the strategy that shows its failure.
runs=(oversell:none ttl-expiry:fenced deadlock:safe)

if [ "${1:-}" = "--fresh" ] || ! ls docs/demo/*.jsonl >/dev/null 2>&1; then
  rm -f docs/demo/*.jsonl
  for i in "${!runs[@]}"; do
    name=${runs[$i]%%:*} lock=${runs[$i]##*:}
    "$bin" run "$name" --lock "$lock" --seed 42 --quiet --events "docs/demo/$((i + 1))-$name-$lock.jsonl" >/dev/null
  done
fi

from=()
for f in docs/demo/*.jsonl; do from+=(--from "$f"); done
"$bin" record "${from[@]}" --cast docs/demo.cast --size 100x30 --present --hold 2500ms --play-speed 0.5 --fps 10

npx --yes svg-term-cli@2.1.1 --in docs/demo.cast --out docs/demo.svg --window --no-cursor
echo "demo: docs/demo.cast, docs/demo.svg ($(du -h docs/demo.svg | cut -f1))"
