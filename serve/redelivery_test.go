package serve

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
)

// A job whose reservation lapses while it runs is given to the next
// request: the first run deletes it, and the redelivered run, finding it
// gone, is answered 409 Conflict (the job moved on under it) without a
// Retry-After — not 502, which says the server failed.
func TestRedeliveredJobIsAConflict(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"plain", "idempotency"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			s, url := start(t, nil, "queue-double", strategy, func(p *event.Params) {
				p.TTL, p.Work = event.Millis(200*time.Millisecond), event.Millis(700*time.Millisecond)
			})
			first := make(chan answer, 1)
			go func() { first <- do(t, "POST", url+"/jobs/7/run", "") }()
			waitFor(t, s, func(e event.Event) bool { return e.Kind == event.KindAcquired })
			time.Sleep(400 * time.Millisecond) // past the 200 ms reservation: the job is queued again
			second := do(t, "POST", url+"/jobs/7/run", "")
			if a := <-first; a.code != http.StatusOK || !a.bool("success") {
				t.Errorf("the first run: %d %s", a.code, a.raw)
			}
			if second.code != http.StatusConflict || second.retryAfter != "" || second.bool("success") {
				t.Errorf("the redelivered run: %d (Retry-After %q) %s", second.code, second.retryAfter, second.raw)
			}
			if e, _ := second.body["error"].(string); !strings.Contains(e, "redelivered") {
				t.Errorf("the redelivered run's error does not say what happened: %s", second.raw)
			}
			if sum := s.Run().Summary(); sum.FailedError != 0 {
				t.Errorf("a redelivery counted as an error: %+v", sum)
			}
		})
	}
}
