package supervisor

import (
	"encoding/json"
	"testing"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// TestLogLevels: a guest log record's level is a lower-case word in
// results (not the protobuf enum name), and a record an older daemon
// encoded with the enum name decodes to the word.
func TestLogLevels(t *testing.T) {
	cases := []struct {
		level sidecarv1.LogLevel
		want  string
	}{
		{sidecarv1.LogLevel_LOG_LEVEL_TRACE, "trace"},
		{sidecarv1.LogLevel_LOG_LEVEL_DEBUG, "debug"},
		{sidecarv1.LogLevel_LOG_LEVEL_INFO, "info"},
		{sidecarv1.LogLevel_LOG_LEVEL_WARN, "warn"},
		{sidecarv1.LogLevel_LOG_LEVEL_ERROR, "error"},
		{sidecarv1.LogLevel_LOG_LEVEL_UNSPECIFIED, "unspecified"},
	}
	for _, c := range cases {
		res := resultOf("i", &sidecarv1.InvokeResponse{Logs: []*sidecarv1.LogRecord{{Level: c.level, Message: "m"}}})
		if got := res.Logs[0].Level; got != c.want {
			t.Errorf("%v: level %q, want %q", c.level, got, c.want)
		}
		b, err := json.Marshal(res.Logs[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"level":"` + c.want + `","message":"m"}`; string(b) != want {
			t.Errorf("%v: JSON %s, want %s", c.level, b, want)
		}
		// Compat: the old enum name on input decodes to the word.
		var r LogRecord
		if err := json.Unmarshal([]byte(`{"level":"`+c.level.String()+`","message":"m"}`), &r); err != nil || r.Level != c.want || r.Message != "m" {
			t.Errorf("decoding %s: %+v, %v", c.level, r, err)
		}
		var again LogRecord
		if err := json.Unmarshal(b, &again); err != nil || again != res.Logs[0] {
			t.Errorf("round trip of %s: %+v, %v", b, again, err)
		}
	}
	var r Result
	if err := json.Unmarshal([]byte(`{"logs":[{"level":"LOG_LEVEL_WARN","message":"x"}]}`), &r); err != nil || r.Logs[0].Level != "warn" {
		t.Errorf("a result's logs: %+v, %v", r.Logs, err)
	}
	if err := json.Unmarshal([]byte(`{"level":1}`), new(LogRecord)); err == nil {
		t.Error("a numeric level decoded")
	}
}
