#!/bin/sh
# biglog.sh OUT.jsonl [EVENTS] [SCENARIO] [STRATEGY]: writes a long event
# log for measuring `locklab check` and `replay` on one: a seeded run of
# SCENARIO (oversell) under STRATEGY (safe), repeated until the log holds
# EVENTS events (12000000), each repetition after the last. A SCENARIO of
# hostile:reads, hostile:writes or hostile:renewals writes instead a log
# no run writes, that holds the tally's fold at its bounds (reads never
# written; writes after one read never followed; renewals never answered).
set -eu
out=${1:?usage: scripts/biglog.sh OUT.jsonl [EVENTS] [SCENARIO] [STRATEGY]}
events=${2:-12000000}
scenario=${3:-oversell}
strategy=${4:-safe}
cd "$(dirname "$0")/.."
case $out in /*) ;; *) out=$OLDPWD/$out ;; esac
case $scenario in hostile:*)
	LOCKLAB_BIGLOG=$out LOCKLAB_HOSTILE=${scenario#hostile:} LOCKLAB_BIGLOG_EVENTS=$events \
		go test -run '^TestWriteHostileLog$' -count=1 ./check/linear >/dev/null
	ls -l "$out"
	exit 0
esac
one=$(mktemp)
trap 'rm -f "$one"' EXIT
go run . run "$scenario" --lock "$strategy" --seed 1 -q --events "$one" >/dev/null || true
LOCKLAB_BIGLOG=$out LOCKLAB_BIGLOG_FROM=$one LOCKLAB_BIGLOG_EVENTS=$events \
	go test -run '^TestWriteBigLog$' -count=1 ./check/linear >/dev/null
ls -l "$out"
