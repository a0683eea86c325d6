#!/usr/bin/env bash
# Regenerates the README's demo: docs/demo.cast (asciicast v2) and
# docs/demo.svg (animated, by svg-term-cli) — talks/locking-101.yaml given
# through locklab's own view, title cards and beats, recorded from the event
# logs in docs/demo/ (one per scene). With --fresh it runs the talk's scenes
# again first (new races, new logs); without it the same logs give the same
# recording, byte for byte. A caption stays 3 s; a stretch between two beats
# plays in at most 10 s (--max-gap), so the four stories take four minutes and
# the picture stays under 2 MB.
#
#   scripts/demo.sh            # re-record from docs/demo/*.jsonl
#   scripts/demo.sh --fresh    # run the scenes again, then record
#
# Needs Go and Node.js (npx fetches svg-term-cli).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)/locklab
go build -o "$bin" .

talk=talks/locking-101.yaml
scenes=$("$bin" talk --check "$talk" | grep -c '^  [0-9]')

if [ "${1:-}" = "--fresh" ] || ! ls docs/demo/scene-*.jsonl >/dev/null 2>&1; then
  rm -f docs/demo/*.jsonl
  "$bin" record --talk "$talk" --events docs/demo/scene.jsonl --cast "$(dirname "$bin")/fresh.cast" >/dev/null
fi

from=()
for i in $(seq 1 "$scenes"); do from+=(--from "docs/demo/scene-$i.jsonl"); done
"$bin" record --talk "$talk" "${from[@]}" --cast docs/demo.cast --size 100x30 \
  --hold 3s --fps 2 --max-gap 10s

npx --yes svg-term-cli@2.1.1 --in docs/demo.cast --out docs/demo.svg --window --no-cursor
echo "demo: docs/demo.cast, docs/demo.svg ($(du -h docs/demo.svg | cut -f1))"
