package policy

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func TestDiff(t *testing.T) {
	base := func() *Decision {
		return &Decision{
			Grants: Grants{
				HTTPHosts:       []string{"*.example.com", "api.example.org"},
				SecretKeys:      []string{"global/api_*", "skill:acme.echo_http/api_token"},
				StoragePrefixes: []string{"cache/*", "skills"},
				Channels:        []string{"ops"},
				HTTP:            HTTPRules{Schemes: []string{"https"}, Ports: []int{443}, MaxRedirects: 5, MaxRequestBytes: 10, MaxResponseBytes: 10, RequestTimeout: time.Second},
			},
			Limits: Limits{Fuel: 10_000_000, MaxMemoryBytes: 1 << 20, WallClock: 2 * time.Second, MaxTableElements: 10, MaxInstances: 1, MaxCapabilityCalls: 5, MaxStorageBytes: 100},
		}
	}
	tests := []struct {
		name   string
		change func(d *Decision)
		lines  []string
	}{
		{"same", func(*Decision) {}, []string{}},
		{"less is no escalation", func(d *Decision) {
			d.Grants.HTTPHosts = nil
			d.Grants.SecretKeys = d.Grants.SecretKeys[:1]
			d.Limits = Limits{}
			d.Grants.HTTP.Ports = nil
		}, []string{}},
		{"covered entries are no escalation", func(d *Decision) {
			d.Grants.HTTPHosts = []string{"a.b.example.com", "*.api.example.com", "api.example.org"}
			d.Grants.SecretKeys = []string{"global/api_key"}
			d.Grants.StoragePrefixes = []string{"skills/cache", "cache/*"}
		}, []string{}},
		{"new entries", func(d *Decision) {
			d.Grants.HTTPHosts = append(d.Grants.HTTPHosts, "api2.example.org", "*.org", "example.com")
			d.Grants.SecretKeys = append(d.Grants.SecretKeys, "global/*", "skill:other/api_token")
			d.Grants.StoragePrefixes = append(d.Grants.StoragePrefixes, "skillset", "cache/x", "*")
			d.Grants.Channels = []string{"ops", "alerts"}
			d.Grants.DeviceCapabilities = []string{"camera"}
			d.Grants.NodeCapabilities = []string{"gpu"}
		}, []string{
			"+ http host api2.example.org", "+ http host *.org", "+ http host example.com",
			"+ secret global/*", "+ secret skill:other/api_token",
			"+ storage prefix skillset", "+ storage prefix cache/x", "+ storage prefix *",
			"+ channel alerts", "+ device capability camera", "+ node capability gpu",
		}},
		{"wider HTTP rules", func(d *Decision) {
			d.Grants.HTTP = HTTPRules{Schemes: []string{"http", "https"}, Ports: []int{80, 443}, AllowPrivate: true,
				MaxRedirects: 6, MaxRequestBytes: 11, MaxResponseBytes: 12, RequestTimeout: 2 * time.Second}
		}, []string{
			"+ http scheme http", "+ http port 80", "+ http private addresses allowed",
			"+ http_max_redirects 5 -> 6", "+ http_max_request_bytes 10 -> 11",
			"+ http_max_response_bytes 10 -> 12", "+ http_request_timeout_ms 1000 -> 2000",
		}},
		{"bigger limits", func(d *Decision) {
			d.Limits = Limits{Fuel: 20_000_000, MaxMemoryBytes: 2 << 20, WallClock: 5 * time.Second, MaxTableElements: 11, MaxInstances: 2, MaxCapabilityCalls: 6, MaxStorageBytes: 101}
		}, []string{
			"+ fuel 10000000 -> 20000000", "+ max_memory_bytes 1048576 -> 2097152", "+ wall_clock_ms 2000 -> 5000",
			"+ max_table_elements 10 -> 11", "+ max_instances 1 -> 2", "+ max_capability_calls 5 -> 6",
			"+ max_storage_bytes 100 -> 101",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := base()
			tt.change(next)
			esc := Diff(base(), next)
			if got := esc.Lines(); !slices.Equal(got, tt.lines) {
				t.Fatalf("Lines:\n got %q\nwant %q", got, tt.lines)
			}
			if esc.Empty() != (len(tt.lines) == 0) {
				t.Fatalf("Empty() = %v", esc.Empty())
			}
			err := esc.Err()
			if len(tt.lines) == 0 {
				if err != nil {
					t.Fatalf("Err() = %v", err)
				}
				return
			}
			var ee *EscalationError
			if !errors.Is(err, ErrCapabilityEscalation) || errcode.Of(err) != "capability_escalation" || !errors.As(err, &ee) {
				t.Fatalf("Err() = %v", err)
			}
		})
	}
}

func TestDiffNil(t *testing.T) {
	if esc := Diff(&Decision{}, nil); !esc.Empty() {
		t.Fatalf("Diff(x, nil) = %v", esc.Lines())
	}
	d := evaluate(t, Default(), echoManifest(t))
	if esc := Diff(d, d); !esc.Empty() {
		t.Fatalf("Diff(d, d) = %v", esc.Lines())
	}
	esc := Diff(nil, d)
	if !slices.Contains(esc.Lines(), "+ http host api.example.com") || !slices.Contains(esc.Lines(), "+ fuel 0 -> 5000000") {
		t.Fatalf("Diff(nil, d) = %q", esc.Lines())
	}
}

// An upgrade as the installer sees it: both versions evaluated under the
// same profile.
func TestDiffUpgrade(t *testing.T) {
	old := evaluate(t, Default(), echoManifest(t))
	m := echoManifest(t)
	m.Capabilities.HTTPEgressAllowlist = append(m.Capabilities.HTTPEgressAllowlist, "api2.example.com")
	m.Capabilities.Quotas.FuelBudget *= 2
	m.Capabilities.Secrets = append(m.Capabilities.Secrets, manifest.SecretScope{Scope: "global", KeyNames: []string{"openai_api_key"}})
	next := evaluate(t, Default(), m)
	want := []string{"+ http host api2.example.com", "+ secret global/openai_api_key", "+ fuel 5000000 -> 10000000"}
	if got := Diff(old, next).Lines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Lines:\n got %q\nwant %q", got, want)
	}
	wantErr := "new version escalates capabilities: + http host api2.example.com; + secret global/openai_api_key; + fuel 5000000 -> 10000000"
	if err := Diff(old, next).Err(); err == nil || err.Error() != wantErr {
		t.Fatalf("Err() = %v", err)
	}
}

// A read root that becomes a write root is an escalation, listed once; a
// brand new write root is listed as a new prefix only.
func TestDiffStorageWritable(t *testing.T) {
	old := evaluate(t, Default(), echoManifest(t)) // write skills/cache, read skills/data
	m := echoManifest(t)
	m.Capabilities.Filesystem.WriteRoots = append(m.Capabilities.Filesystem.WriteRoots, "skills/data", "logs")
	next := evaluate(t, Default(), m)
	want := []string{"+ storage prefix logs", "+ storage writable skills/data"}
	if got := Diff(old, next).Lines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Lines:\n got %q\nwant %q", got, want)
	}
	// The reverse (write root demoted to read root) escalates nothing.
	if esc := Diff(next, old); !esc.Empty() {
		t.Fatalf("demotion escalates %q", esc.Lines())
	}
}
