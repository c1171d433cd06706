package audit

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

const abiDoc = "../../sdk/ABI.md"

// abiSection returns the text of sdk/ABI.md from the heading that starts
// with head to the next heading of the same or a higher level.
func abiSection(t *testing.T, doc, head string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+head)
	if i < 0 {
		t.Fatalf("%s has no heading %q", abiDoc, head)
	}
	rest := doc[i+1:]
	level := strings.Index(rest, " ")
	end := regexp.MustCompile(`\n#{1,` + string(rune('0'+level)) + `} `).FindStringIndex(rest[len(head):])
	if end == nil {
		return rest
	}
	return rest[:len(head)+end[0]]
}

var (
	sigRow  = regexp.MustCompile("(?m)^\\|\\s*`([a-z-]+)`\\s*\\|\\s*`\\(([^)]*)\\) -> ([^`]+)`")
	nameRow = regexp.MustCompile(`(?m)^\|([^|]+)\|`)
	ticked  = regexp.MustCompile("`([a-z_0-9]+)`")
)

// parseABISig turns ABI.md's "(i32 level, i32 ptr)" and "i32" or "()"
// into a signature.
func parseABISig(t *testing.T, params, result string) wasmbin.FuncType {
	t.Helper()
	valType := func(s string) wasmbin.ValType {
		switch s {
		case "i32":
			return wasmbin.I32
		case "i64":
			return wasmbin.I64
		}
		t.Fatalf("%s: unknown type %q", abiDoc, s)
		return 0
	}
	var ft wasmbin.FuncType
	for _, p := range strings.Split(params, ",") {
		if f := strings.Fields(p); len(f) > 0 {
			ft.Params = append(ft.Params, valType(f[0]))
		}
	}
	if r := strings.TrimSpace(result); r != "()" {
		ft.Results = append(ft.Results, valType(r))
	}
	return ft
}

// TestHostFuncsMatchABI keeps the audit's import table in step with
// sdk/ABI.md §2: the same modules, the same function names, and for §2.1
// and §2.2 the same signatures.
func TestHostFuncsMatchABI(t *testing.T) {
	b, err := os.ReadFile(abiDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, s := range []struct{ head, module string }{
		{"### 2.1", moduleCapabilities},
		{"### 2.2", moduleHost},
	} {
		sec := abiSection(t, doc, s.head)
		if !strings.Contains(strings.SplitN(sec, "\n", 2)[0], "`"+s.module+"`") {
			t.Errorf("%s heading does not name %s", s.head, s.module)
		}
		documented := map[string]wasmbin.FuncType{}
		for _, m := range sigRow.FindAllStringSubmatch(sec, -1) {
			documented[m[1]] = parseABISig(t, m[2], m[3])
		}
		if len(documented) == 0 {
			t.Fatalf("%s: no function rows found", s.head)
		}
		ours := hostFuncs[s.module]
		if got, want := slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(documented)); !slices.Equal(got, want) {
			t.Errorf("%s: audit knows %v, ABI.md lists %v", s.module, got, want)
		}
		for name, ft := range documented {
			if hf, ok := ours[name]; ok && !hf.funcType().Equal(ft) {
				t.Errorf("%s.%s: audit has %s, ABI.md says %s", s.module, name, sigString(hf.funcType()), sigString(ft))
			}
		}
	}

	sec := abiSection(t, doc, "### 2.3")
	if !strings.Contains(strings.SplitN(sec, "\n", 2)[0], "`"+moduleWASI+"`") {
		t.Errorf("§2.3 heading does not name %s", moduleWASI)
	}
	var documented []string
	for _, row := range nameRow.FindAllStringSubmatch(sec, -1) {
		for _, m := range ticked.FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, m[1])
		}
	}
	slices.Sort(documented)
	if got := slices.Sorted(maps.Keys(hostFuncs[moduleWASI])); !slices.Equal(got, documented) {
		t.Errorf("WASI subset: audit knows %v, ABI.md lists %v", got, documented)
	}
	for name := range hostFuncs[moduleWASI] {
		if isWASIFilesystem(name) || isWASISocket(name) {
			t.Errorf("%s is both provided and in a refused family", name)
		}
	}
}
