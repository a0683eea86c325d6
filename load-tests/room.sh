#!/usr/bin/env bash
# A workshop round from outside, every part its own process: a redis-server
# on a free port, a headless host, and JOINERS `locklab join` processes with
# WORKERS workers each (30 × 5 by default), racing oversell under the safe
# lock with full-jitter retries for as much stock as there are workers. It
# prints the host's summary and scoreboard, then how many events the stream
# brought into the host's log and how fast (events per second of the round,
# from its first remote event to its last).
#
#   load-tests/room.sh                 # 30 joiners × 5 workers
#   JOINERS=10 WORKERS=3 load-tests/room.sh
#
# The host's frame time needs its view: go test ./tui -run '^$' -bench HostRoom30x5
set -euo pipefail
JOINERS=${JOINERS:-30}
WORKERS=${WORKERS:-5}
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

go build -o "$dir/locklab" .
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)
url="redis://127.0.0.1:$port"
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

stock=$((JOINERS * WORKERS))
"$dir/locklab" host --redis "$url" --room load --attendees "$JOINERS" --lock safe --retry full-jitter \
	--max-retries 200 --retry-base 5ms --retry-cap 200ms --stock "$stock" --seed 1 --events "$dir/round.jsonl" &
host=$!
pids+=($host)
for i in $(seq -w 1 "$JOINERS"); do
	"$dir/locklab" join --redis "$url" --room load --name "a$i" --workers "$WORKERS" --rounds 1 >"$dir/join-$i.log" 2>&1 &
	pids+=($!)
done
wait "$host"

python3 - "$dir/round.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
events = [json.loads(l) for l in lines[1:-1]]
remote = [e["t"] for e in events if e.get("worker", -1) >= 0]
span = (max(remote) - min(remote)) / 1e6
print(f"{len(events)} events in the host's log, {len(remote)} from the joiners over {span:.3f} s of the round: "
      f"{len(remote) / span:.0f} events/s")
EOF
