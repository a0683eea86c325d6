package event

import "testing"

// FuzzDecodeAgrees checks the fast event decoder against encoding/json: if
// the fast one accepts a line, encoding/json must read the same event.
func FuzzDecodeAgrees(f *testing.F) {
	f.Add([]byte(`{"seq":1,"t":5,"worker":3,"kind":"backoff","res":"lock:stock","delay_ms":12.5,"ok":true}`))
	f.Add([]byte(`{"seq":0,"t":1,"worker":-1,"kind":"init","stock":-3,"x":null,"Stock":4}`))
	f.Add([]byte(`{"seq":2,"t":9,"worker":0,"kind":"read","msg":"h\u00e9llo","ttl_ms":1e3}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast Event
		hasT, hasW, err := DecodeEventForTest(line, &fast)
		if err != nil {
			return
		}
		slow, ok := SlowDecodeForTest(line)
		if !ok {
			t.Fatalf("fast path accepted %q, encoding/json did not", line)
		}
		if hasT && hasW && fast != slow {
			t.Fatalf("%q:\nfast %+v\nslow %+v", line, fast, slow)
		}
	})
}
