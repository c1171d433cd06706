package daemon_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSIGTERMUnderLoad: SIGTERM while calls are in flight lets them finish
// (a slow one included), refuses new work, stops every sidecar and exits 0
// with no child process, socket or daemon.json left (proc.stop checks).
func TestSIGTERMUnderLoad(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "shutdown_timeout = \"20s\"\n")
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.load"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", wasmArtifact(t, "test.sleeper", "sleep.wasm", "wall_clock_timeout_ms = 1500"), nil)
	// Both sidecars running before the load starts.
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.load/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)

	call := func(path string) (int, []byte, error) {
		body, _ := json.Marshal(map[string]any{"input": map[string]any{"k": "v"}})
		req, _ := http.NewRequest(http.MethodPost, p.url+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes(), nil
	}

	var ok, refused atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				st, body, err := call("/v1/skills/test.load/tools/test.probe/call")
				switch {
				case err != nil:
					refused.Add(1) // the listener is closed: no new work
					time.Sleep(5 * time.Millisecond)
				case st == http.StatusOK:
					ok.Add(1)
				default:
					select {
					case errs <- string(body):
					default:
					}
				}
			}
		}()
	}
	slow := make(chan string, 1)
	go func() {
		st, body, err := call("/v1/skills/test.sleeper/tools/test.run/call")
		if err != nil {
			slow <- "error: " + err.Error()
			return
		}
		if st != http.StatusGatewayTimeout || errCode(t, body) != "timeout" {
			slow <- "unexpected: " + string(body)
			return
		}
		slow <- ""
	}()
	time.Sleep(500 * time.Millisecond) // the slow call is in flight
	start := time.Now()
	p.stop()
	stop.Store(true)
	wg.Wait()
	if s := <-slow; s != "" {
		t.Errorf("the in-flight slow call did not finish cleanly during the drain: %s", s)
	}
	close(errs)
	for e := range errs {
		t.Errorf("a call failed during shutdown with an error answer: %s", e)
	}
	if ok.Load() == 0 {
		t.Error("no call succeeded under load")
	}
	t.Logf("under load: %d calls ok, %d refused after the listener closed; exit %v after SIGTERM", ok.Load(), refused.Load(), time.Since(start).Round(time.Millisecond))
}
