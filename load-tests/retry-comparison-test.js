// k6: contention as a burst (100 users at once) and as a ramp (up to 100
// users over 30 s), one after the other, on the same server.
//
//   locklab serve --lock safe --retry full-jitter --stock 1000000 --delay 5ms   # then:
//   k6 run load-tests/retry-comparison-test.js
//
// Run it once per --retry policy (none, fixed, exponential, full-jitter,
// equal-jitter, decorrelated-jitter) and compare the conflicts, the
// latency and GET /metrics' locklab_lock_retries_total.
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Counter } from 'k6/metrics';

const BASE = __ENV.LOCKLAB_URL || 'http://127.0.0.1:8080';
const sold = new Counter('locklab_sold');
const conflicts = new Counter('locklab_conflicts');

export const options = {
  scenarios: {
    burst: { executor: 'per-vu-iterations', vus: 100, iterations: 5, maxDuration: '20s', tags: { pattern: 'burst' } },
    ramp: {
      executor: 'ramping-vus', startTime: '25s', startVUs: 0, tags: { pattern: 'ramp' },
      stages: [{ duration: '15s', target: 30 }, { duration: '15s', target: 100 }, { duration: '5s', target: 0 }],
    },
  },
  // Generous bounds: they are here so k6 reports each pattern's latency.
  thresholds: {
    'http_req_duration{pattern:burst}': ['p(99)<30000'],
    'http_req_duration{pattern:ramp}': ['p(99)<30000'],
  },
};

export function setup() {
  return { round: http.post(`${BASE}/reset`).json('round') };
}

export default function () {
  const r = http.post(`${BASE}/buy`);
  check(r, { 'answered 200 or 409': (res) => res.status === 200 || res.status === 409 });
  if (r.status === 200 && r.json('success')) sold.add(1);
  if (r.status === 409) conflicts.add(1);
  sleep(0.05);
}

export function teardown() {
  const s = http.get(`${BASE}/state`).json('summary');
  console.log(`${s.strategy} ${s.successes} sold; ${s.lock_calls} lock calls, ${s.lock_calls_denied} denied; ${s.verdict}`);
}
