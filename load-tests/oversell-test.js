// k6: 50 virtual users race for one item at the same instant.
//
//   locklab serve --scenario oversell --lock none --stock 1     # then:
//   k6 run load-tests/oversell-test.js
//
// With --lock none more than one purchase succeeds (OVERSOLD); with
// --lock safe --retry full-jitter exactly the stock sells. The verdict is
// the checker's, read from GET /state at the end.
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';

const BASE = __ENV.LOCKLAB_URL || 'http://127.0.0.1:8080';
const sold = new Counter('locklab_sold');
const conflicts = new Counter('locklab_conflicts');

export const options = {
  scenarios: {
    race: { executor: 'per-vu-iterations', vus: 50, iterations: 1, maxDuration: '10s' },
  },
  thresholds: { checks: ['rate==1'] },
};

export function setup() {
  const r = http.post(`${BASE}/reset`);
  check(r, { 'a new round': (res) => res.status === 200 });
  return { round: r.json('round') };
}

export default function () {
  const r = http.post(`${BASE}/buy`);
  check(r, { 'answered 200 or 409': (res) => res.status === 200 || res.status === 409 });
  if (r.status === 200 && r.json('success')) sold.add(1);
  if (r.status === 409) conflicts.add(1);
}

export function teardown(data) {
  const s = http.get(`${BASE}/state`).json('summary');
  console.log(`round ${data.round}: ${s.successes} sold of ${s.initial_stock}; ${s.verdict}`);
}
