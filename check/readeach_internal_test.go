package check

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"
)

// ReadLog decodes on a goroutine of its own and hands the events over in
// batches: the caller gets the header first, then the same events in the
// same order as decoding them one by one, across batch boundaries, and
// the same error after the events read before it.
func TestReadLogInBatchesIsDecodeLog(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"format":"locklab-events","version":2,"scenario":"oversell","strategy":"safe","params":{"workers":3}}` + "\n")
	n := 3*logBatchLen + 17
	for i := range n {
		fmt.Fprintf(&b, `{"seq":%d,"t":%d,"worker":%d,"kind":"attempt","res":"lock:stock","token":"t%d"}`+"\n", i, i, i%3, i)
	}
	whole := b.String()
	bad := whole + `{"seq":` + "\n" // a bad line after every batch
	cut := whole[:strings.Index(whole, fmt.Sprintf(`{"seq":%d,`, 2*logBatchLen+5))] + "not json\n" + whole
	for name, log := range map[string]string{"whole": whole, "bad last line": bad, "bad line mid-batch": cut} {
		var want, got []event.Event
		wantErr := DecodeLog(strings.NewReader(log), &Recording{}, nil, func(e event.Event) { want = append(want, e) })
		headerFirst := false
		gotErr := ReadLog(strings.NewReader(log), &Recording{}, func() { headerFirst = len(got) == 0 }, func(e event.Event) { got = append(got, e) })
		if !headerFirst {
			t.Errorf("%s: the header was not handed over before the events", name)
		}
		if !slices.Equal(got, want) || len(got) < 2*logBatchLen {
			t.Errorf("%s: %d events in batches, %d decoded one by one (or not the same)", name, len(got), len(want))
		}
		var le *LineError
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || (name != "whole") != errors.As(gotErr, &le) {
			t.Errorf("%s: error %v in batches, %v decoded one by one", name, gotErr, wantErr)
		}
	}
}

// A fold that panics does not leave the decoding goroutine waiting on a
// batch nobody takes: the panic reaches the caller.
func TestReadLogPanicReachesTheCaller(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"format":"locklab-events","version":2,"scenario":"oversell","strategy":"safe","params":{"workers":1}}` + "\n")
	for i := range 10 * logBatchLen {
		fmt.Fprintf(&b, `{"seq":%d,"t":%d,"worker":0,"kind":"attempt","res":"lock:stock"}`+"\n", i, i)
	}
	boom := errors.New("boom")
	defer func() {
		if r := recover(); r != boom {
			t.Fatalf("recovered %v, want the fold's panic", r)
		}
	}()
	_ = ReadLog(strings.NewReader(b.String()), &Recording{}, nil, func(event.Event) { panic(boom) })
}
