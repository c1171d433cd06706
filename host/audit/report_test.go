package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
)

var update = flag.Bool("update", false, "rewrite the golden report in testdata/audit")

// goldenReport is the pretty JSON of the report on Palyra's sample with the
// baseline module: the report's shape, field names and messages.
const goldenReport = "sample_report.golden.json"

func TestGoldenReport(t *testing.T) {
	r := auditModule(t, sampleManifest, fixture(t, "palyra_baseline"))
	// The payload hash depends on how host/artifact serializes skill.toml,
	// which is not this package's contract.
	r.PayloadSHA256 = "<payload_sha256>"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join(fixtureDir, goldenReport)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./host/audit -run TestGoldenReport -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report differs from %s (run with -update after checking the change):\n%s", path, got)
	}
}

// TestDeterministic: the same input gives the same JSON, whatever the
// iteration order of the entries map and of the details maps.
func TestDeterministic(t *testing.T) {
	modules := map[string][]byte{}
	for _, name := range []string{"reactor", "wasi_path_open", "cap_all_handles", "memory_two", "table_two", "start_function", "palyra_exports3"} {
		modules[name+".wasm"] = fixture(t, name)
	}
	vr := verified(t, sampleManifest, modules)
	var first []byte
	for i := 0; i < 20; i++ {
		// A fresh map each time: Go randomizes iteration order per map
		// and per range statement.
		insp := *vr.Inspection
		insp.Entries = maps.Clone(vr.Inspection.Entries)
		r, err := Audit(context.Background(), Input{Inspection: &insp, TrustDecision: vr.TrustDecision, Options: hermetic(Options{})})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(r)
		if !bytes.Equal(b, b2) {
			t.Fatal("two encodings of one report differ")
		}
		if first == nil {
			first = b
			continue
		}
		if !bytes.Equal(first, b) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, b)
		}
	}
}

func TestReportJSONShape(t *testing.T) {
	r := auditModule(t, bareManifest, fixture(t, "reactor"))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	want := []string{"skill_id", "version", "publisher", "accepted", "passed", "should_quarantine", "trust_decision",
		"payload_sha256", "generated_at_unix_ms", "policy", "manifest_warnings", "checks", "quarantine_reasons", "vulnerability_scan"}
	if len(top) != len(want) {
		t.Errorf("report has %d fields, want %d: %s", len(top), len(want), b)
	}
	for _, k := range want {
		if _, ok := top[k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
	for _, k := range []string{"manifest_warnings", "quarantine_reasons"} {
		if string(top[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, top[k])
		}
	}
	if string(top["policy"]) != `{"max_module_bytes":8388608,"max_exported_functions":128,"allow_device_capabilities":false,"allow_wildcard_capabilities":false}` {
		t.Errorf("policy = %s", top["policy"])
	}
	// A check without details has no details key, as in Palyra.
	if !strings.Contains(string(b), `{"check_id":"signature_validity","status":"pass","severity":"info","message":"signature chain and payload hash verified"}`) {
		t.Errorf("signature_validity check not in Palyra's shape: %s", b)
	}
	// The report decodes back into itself.
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Passed != r.Passed || len(back.Checks) != len(r.Checks) || back.VulnerabilityScan.CheckID != "vulnerability_feed_hook" {
		t.Errorf("round trip: %+v", back)
	}
}

func TestFailedAndWarningChecks(t *testing.T) {
	r := auditModule(t, bareManifest, fixture(t, "reactor"))
	if f := r.FailedChecks(); f == nil || len(f) != 0 {
		t.Errorf("FailedChecks() = %#v, want empty, not nil", f)
	}
	if r.Err() != nil {
		t.Errorf("Err() = %v", r.Err())
	}
	if _, ok := r.Check("no_such_check"); ok {
		t.Error("Check found a missing id")
	}
	r = auditModule(t, bareManifest, fixture(t, "start_function"))
	if w := r.WarningChecks(); strings.Join(w, ",") != "wasm_start_function" {
		t.Errorf("WarningChecks() = %v", w)
	}
}

// TestInspectionUnchanged: Audit modifies nothing it is given, and the
// report shares no slice with the manifest.
func TestInspectionUnchanged(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")},
		artifact.File{Path: "prompt.txt", Data: []byte("hello")})
	before, _ := json.Marshal(vr.Manifest)
	entries := maps.Clone(vr.Inspection.Entries)
	r := run(t, vr, Input{})
	hosts := mustCheck(t, r, "manifest_http_egress_scopes").Details["hosts"].([]string)
	hosts[0] = "changed"
	after, _ := json.Marshal(vr.Manifest)
	if !bytes.Equal(before, after) {
		t.Error("the manifest changed")
	}
	if !maps.EqualFunc(entries, vr.Inspection.Entries, bytes.Equal) {
		t.Error("the entries changed")
	}
}

// TestConcurrentAudits: Audit shares nothing between calls; run under
// -race.
func TestConcurrentAudits(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "cap_all_handles")})
	want, err := json.Marshal(run(t, vr, Input{}))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Audit(context.Background(), Input{Inspection: vr.Inspection, TrustDecision: vr.TrustDecision, Options: hermetic(Options{})})
			if err != nil {
				errs <- err
				return
			}
			if got, _ := json.Marshal(r); !bytes.Equal(got, want) {
				errs <- fmt.Errorf("concurrent report differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
