// k6: 100 virtual users buy without pause for 30 seconds.
//
//   locklab serve --lock safe --stock 1000000   # then:
//   k6 run load-tests/high-load-test.js
//
// Each request is one worker of the live run. When a round is full (503),
// one new round is started (POST /reset?if_round=N: many clients, one
// reset). Over --rate the server answers 429; both count as refused.
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';

const BASE = __ENV.LOCKLAB_URL || 'http://127.0.0.1:8080';
const sold = new Counter('locklab_sold');
const conflicts = new Counter('locklab_conflicts');
const refused = new Counter('locklab_refused');
const held = new Trend('locklab_worker_ms', true);

export const options = {
  scenarios: {
    sustained: { executor: 'constant-vus', vus: 100, duration: '30s' },
  },
  thresholds: {
    checks: ['rate>0.99'],
    http_req_duration: ['p(99)<1000'],
  },
};

export function setup() {
  return { round: http.post(`${BASE}/reset`).json('round') };
}

export default function () {
  const r = http.post(`${BASE}/buy`);
  check(r, { 'answered': (res) => [200, 409, 429, 503].includes(res.status) });
  if (r.status === 200 || r.status === 409) held.add(r.json('duration_ms'));
  if (r.status === 200 && r.json('success')) sold.add(1);
  else if (r.status === 409) conflicts.add(1);
  else if (r.status === 503) {
    refused.add(1);
    const round = r.json('round');
    if (round) http.post(`${BASE}/reset?if_round=${round}`);
  } else if (r.status === 429) refused.add(1);
}

export function teardown() {
  const s = http.get(`${BASE}/state`).json('summary');
  console.log(`last round: ${s.successes} sold, ${s.lock_calls_denied} of ${s.lock_calls} lock calls denied; ${s.verdict}`);
}
