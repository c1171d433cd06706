package anomaly

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/codescan"
)

func TestDefaultPolicyIsValid(t *testing.T) {
	p := DefaultPolicy()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		if _, ok := p.Thresholds[k]; !ok {
			t.Errorf("DefaultPolicy does not decide kind %s", k)
		}
	}
	if p.Thresholds[KindSidecarCrashed] != 0 {
		t.Error("DefaultPolicy counts crashes, which the supervisor's crashloop handles")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want string // "" = valid
	}{
		{"default", DefaultPolicy(), ""},
		{"all off", policy(time.Minute, nil), ""},
		{"max", policy(MaxWindow, map[string]int{KindTrap: MaxThreshold}), ""},
		{"zero window", policy(0, nil), "window is 0s, must be more than 0 and at most 24h0m0s"},
		{"negative window", policy(-time.Second, nil), "window is -1s"},
		{"window too long", policy(MaxWindow+time.Second, nil), "window is 24h0m1s"},
		{"negative threshold", policy(time.Minute, map[string]int{KindTrap: -1}), "thresholds.trap is -1, must be from 0 (off) to 1000000"},
		{"threshold too high", policy(time.Minute, map[string]int{KindTimeout: MaxThreshold + 1}), "thresholds.timeout is 1000001"},
		{"unknown kind", policy(time.Minute, map[string]int{"fuel": 5}), `unknown kind "fuel" (kinds: capability_denied, fuel_exhausted, invalid_output, memory_limit, sidecar_crashed, timeout, trap)`},
		{"code is not a kind", policy(time.Minute, map[string]int{"memory_limit_exceeded": 5}), `unknown kind "memory_limit_exceeded"`},
		{"long unknown kind is cut", policy(time.Minute, map[string]int{strings.Repeat("x", 500): 1}), `unknown kind "` + strings.Repeat("x", 64) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidPolicy) || errcode.Of(err) != "invalid_anomaly_policy" {
				t.Fatalf("Validate = %v, want ErrInvalidPolicy", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestDecodeTOML decodes a policy the way the daemon's configuration does.
func TestDecodeTOML(t *testing.T) {
	var cfg struct {
		Anomaly *Policy `toml:"anomaly"`
	}
	doc := `
[anomaly]
window = "90s"
thresholds = { fuel_exhausted = 5, trap = 3, capability_denied = 10 }
`
	if err := toml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.Anomaly
	if p == nil || p.Window.Duration != 90*time.Second || len(p.Thresholds) != 3 || p.Thresholds[KindTrap] != 3 {
		t.Fatalf("decoded %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}

	out, err := toml.Marshal(DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	var back Policy
	if err := toml.Unmarshal(out, &back); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	if back.Window != DefaultPolicy().Window || back.Thresholds[KindCapabilityDenied] != 10 {
		t.Errorf("round trip gave %+v from\n%s", back, out)
	}

	err = toml.Unmarshal([]byte(`window = "five minutes"`), &back)
	// go-toml reports the error as text, without the chain.
	if err == nil || !strings.Contains(err.Error(), `"five minutes" is not a duration`) {
		t.Errorf("bad window: %v", err)
	}
}

// TestCodesExist checks that every code KindOf knows is one the program
// defines with errcode.New, so a renamed code cannot silently switch a kind
// off. The sources are parsed, not linked: sidecar/internal/wasmrt is cgo.
func TestCodesExist(t *testing.T) {
	codes, err := codescan.Codes("..", "../supervisor", "../broker", "../broker/egress", "../manifest", "../../sidecar/internal/wasmrt")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, c := range codes {
		defined[c] = true
	}
	if len(defined) < 20 {
		t.Fatalf("found only %d codes: is the parse broken?", len(defined))
	}
	for code, kind := range kindOf {
		if !defined[code] {
			t.Errorf("code %s (kind %s) is not defined by any errcode.New", code, kind)
		}
	}
}
