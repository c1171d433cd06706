package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestCallsStreamAndUnary: a call on the sidecar's Calls stream and the
// same call as a unary Invoke (Config.UnaryCalls) give the same outcomes:
// the echo's reply, the sidecar's own timeout, the caller's cancel, and a
// target whose grants changed since LoadSkill (sent with the call) runs in
// the same sidecar.
func TestCallsStreamAndUnary(t *testing.T) {
	for _, unary := range []bool{false, true} {
		name := map[bool]string{false: "stream", true: "unary"}[unary]
		t.Run(name, func(t *testing.T) {
			s := newSup(t, Config{UnaryCalls: unary})
			ctx := ctxT(t)
			tg := fixture(t, "t.echo", "echo.wasm")
			res, err := s.Call(ctx, tg, "t", []byte(`{"n":1}`), CallOptions{})
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			var doc struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(res.Output, &doc); err != nil || string(doc.Input) != `{"n":1}` {
				t.Fatalf("echo replied %s (%v)", res.Output, err)
			}
			pid := res.PID
			tg.Grants = Grants{HTTPHosts: []string{"example.com"}}
			if res, err = s.Call(ctx, tg, "t", []byte(`2`), CallOptions{}); err != nil || res.PID != pid {
				t.Fatalf("with other grants: pid %d (first %d), %v", res.PID, pid, err)
			}

			sl := fixture(t, "t.sleep", "sleep.wasm")
			sl.Limits.Timeout = 100 * time.Millisecond
			if _, err := s.Call(ctx, sl, "t", nil, CallOptions{}); !errors.Is(err, ErrTimeout) {
				t.Fatalf("sleep past its timeout: %v", err)
			}
			sl.Limits.Timeout = time.Minute
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			if _, err := s.Call(cctx, sl, "t", nil, CallOptions{}); !errors.Is(err, ErrCanceled) {
				t.Fatalf("canceled sleep: %v", err)
			}
			if st := s.State("t.sleep", "1.0.0"); st.Crashes != 0 {
				t.Errorf("after the timeout and the cancel the sleep's sidecar is %+v, want no crash", st)
			}
		})
	}
}
