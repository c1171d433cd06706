package manifest_test

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

// skillTOMLDoc is the field reference this test keeps true.
const skillTOMLDoc = "../../docs/skill-toml.md"

// manifestField is one key of skill.toml as the Go types declare it.
type manifestField struct {
	path string // e.g. entrypoints.tools[].input_schema
	typ  string // its TOML type, as the reference writes it
}

// manifestFields walks t's toml tags: a struct field is "<parent>.<tag>",
// an element of an array of tables "<parent>[]", a key of a table of tables
// "<parent>.<name>". Tables are listed as well as the keys in them.
func manifestFields(parent string, t reflect.Type) []manifestField {
	var out []manifestField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		path := tag
		if parent != "" {
			path = parent + "." + tag
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, manifestField{path, "table"})
			out = append(out, manifestFields(path, ft)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, manifestField{path, "array of tables"})
			out = append(out, manifestFields(path+"[]", ft.Elem())...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			out = append(out, manifestField{path, "table of tables"})
			out = append(out, manifestFields(path+".<name>", ft.Elem())...)
		default:
			out = append(out, manifestField{path, tomlTypeOf(ft)})
		}
	}
	return out
}

func tomlTypeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Uint32, reflect.Uint64, reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "array of strings"
		}
	case reflect.Map:
		return "table"
	case reflect.Interface:
		return "value"
	}
	panic(fmt.Sprintf("tomlTypeOf: no TOML type for Go type %s; teach the test and docs/skill-toml.md", t))
}

// docRow is one row of a field table of the reference.
type docRow struct {
	line  int
	cells []string
}

// fieldRows reads the rows of every table of the reference whose header
// starts with "| Field |", keyed by the field path in the first cell.
func fieldRows(t *testing.T) map[string]docRow {
	t.Helper()
	f, err := os.Open(skillTOMLDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]docRow{}
	inTable := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "Field" {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(cells[0], "---") {
			continue
		}
		path := strings.Trim(cells[0], "`")
		if old, dup := rows[path]; dup {
			t.Errorf("%s:%d: field %s is also documented at line %d", skillTOMLDoc, n, path, old.line)
		}
		rows[path] = docRow{line: n, cells: cells}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSkillTOMLReferenceCoversEveryField: docs/skill-toml.md has a row for
// every key of the manifest types (tables included), with its TOML type,
// whether it is required, a default and a meaning, and no row for a key
// that does not exist.
func TestSkillTOMLReferenceCoversEveryField(t *testing.T) {
	fields := manifestFields("", reflect.TypeFor[manifest.Manifest]())
	rows := fieldRows(t)
	known := map[string]bool{}
	for _, f := range fields {
		known[f.path] = true
		row, ok := rows[f.path]
		if !ok {
			t.Errorf("field %s (%s) has no row in %s: add one to its section's table", f.path, f.typ, skillTOMLDoc)
			continue
		}
		if len(row.cells) != 6 {
			t.Errorf("%s:%d: field %s: want 6 cells (Field, Type, Required, Default, Rules and limits, Meaning), found %d", skillTOMLDoc, row.line, f.path, len(row.cells))
			continue
		}
		if !strings.HasPrefix(row.cells[1], f.typ) {
			t.Errorf("%s:%d: field %s: type %q, want it to start with %q", skillTOMLDoc, row.line, f.path, row.cells[1], f.typ)
		}
		if req := row.cells[2]; req != "yes" && req != "no" && !strings.HasPrefix(req, "yes ") && !strings.HasPrefix(req, "no ") {
			t.Errorf("%s:%d: field %s: required is %q, want yes or no", skillTOMLDoc, row.line, f.path, req)
		}
		for i, name := range []string{3: "default", 4: "rules and limits", 5: "meaning"} {
			if i >= 3 && row.cells[i] == "" {
				t.Errorf("%s:%d: field %s: empty %s cell (write — when there is none)", skillTOMLDoc, row.line, f.path, name)
			}
		}
	}
	for path, row := range rows {
		if !known[path] {
			t.Errorf("%s:%d: documents field %s, which the manifest types do not have", skillTOMLDoc, row.line, path)
		}
	}
}

// TestSkillTOMLReferenceRequiredMatchesParse: a field the reference calls
// required is refused when left out of a minimal manifest, and one it calls
// optional is not; so the Required column stays true.
func TestSkillTOMLReferenceRequiredMatchesParse(t *testing.T) {
	rows := fieldRows(t)
	// The top-level keys and those of the one tool, against the minimal manifest.
	for path, row := range rows {
		key, inTool := strings.CutPrefix(path, "entrypoints.tools[].")
		if !inTool && strings.ContainsAny(path, ".[") {
			continue
		}
		if inTool && strings.ContainsAny(key, ".[") {
			continue
		}
		if !inTool {
			key = path
		}
		doc := dropKey(problemsBase, key, inTool)
		if doc == problemsBase {
			continue // not in the minimal manifest
		}
		_, err := manifest.Parse([]byte(doc))
		required := strings.HasPrefix(row.cells[2], "yes")
		if required != (err != nil) {
			t.Errorf("%s:%d: %s is documented required=%v, but leaving it out gives %v", skillTOMLDoc, row.line, path, required, err)
		}
	}
}

// dropKey removes key (a top-level key or table, or a key of the tool) from
// the minimal manifest.
func dropKey(doc, key string, inTool bool) string {
	lines := strings.Split(doc, "\n")
	var out []string
	section, skipping := "", false
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			section = strings.Trim(l, "[]")
			skipping = !inTool && (section == key || strings.HasPrefix(section, key+"."))
		}
		k, _, isKV := strings.Cut(l, " = ")
		drop := skipping ||
			(isKV && !inTool && section == "" && k == key) ||
			(isKV && inTool && section == "entrypoints.tools" && k == key)
		if !drop {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSkillTOMLReferenceLimits: every limit and default the reference
// quotes by its Go name carries the constant's value.
func TestSkillTOMLReferenceLimits(t *testing.T) {
	data, err := os.ReadFile(skillTOMLDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for name, value := range map[string]any{
		"MaxManifestBytes":           manifest.MaxManifestBytes,
		"MaxTools":                   manifest.MaxTools,
		"MaxNesting":                 manifest.MaxNesting,
		"MaxProblems":                manifest.MaxProblems,
		"ProtocolMajor":              manifest.ProtocolMajor,
		"RuntimeVersion":             manifest.RuntimeVersion,
		"DefaultManifestVersion":     manifest.DefaultManifestVersion,
		"DefaultWallClockTimeoutMS":  manifest.DefaultWallClockTimeoutMS,
		"DefaultFuelBudget":          manifest.DefaultFuelBudget,
		"DefaultMaxMemoryBytes":      manifest.DefaultMaxMemoryBytes,
		"DefaultConfigSchemaVersion": manifest.DefaultConfigSchemaVersion,
		"DefaultContractVersion":     manifest.DefaultContractVersion,
		"MaxConfigKeys":              manifest.MaxConfigKeys,
		"MaxConfigKeyBytes":          manifest.MaxConfigKeyBytes,
		"MaxConfigSchemaBytes":       manifest.MaxConfigSchemaBytes,
		"MaxConfigValueBytes":        manifest.MaxConfigValueBytes,
		"MaxConfigBytes":             manifest.MaxConfigBytes,
	} {
		want := fmt.Sprintf("`%s` = %v", name, value)
		if !strings.Contains(doc, want) {
			t.Errorf("%s does not say %s", skillTOMLDoc, want)
		}
	}
	for _, list := range [][]string{manifest.ContractKinds(), manifest.ConfigTypes()} {
		for _, v := range list {
			if !strings.Contains(doc, "`"+v+"`") {
				t.Errorf("%s does not list %q", skillTOMLDoc, v)
			}
		}
	}
}

// TestSkillTOMLReferenceExamplesParse: the reference's first TOML example
// is a complete manifest that parses; every later one is a fragment that,
// put in place of the same sections of the first, parses too.
func TestSkillTOMLReferenceExamplesParse(t *testing.T) {
	data, err := os.ReadFile(skillTOMLDoc)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(data)
	for {
		_, after, ok := strings.Cut(rest, "```toml\n")
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("%s: unterminated toml block", skillTOMLDoc)
		}
		blocks, rest = append(blocks, block), tail
	}
	if len(blocks) < 2 {
		t.Fatalf("%s: found %d toml examples, want the minimal manifest and the section examples", skillTOMLDoc, len(blocks))
	}
	minimal := blocks[0]
	if _, err := manifest.Parse([]byte(minimal)); err != nil {
		t.Fatalf("the minimal manifest does not parse: %v", err)
	}
	for i, frag := range blocks[1:] {
		headers := map[string]bool{}
		for _, l := range strings.Split(frag, "\n") {
			if strings.HasPrefix(l, "[") {
				headers[l] = true
			}
		}
		var kept []string
		dropping := false
		for _, l := range strings.Split(minimal, "\n") {
			if strings.HasPrefix(l, "[") {
				dropping = headers[l]
			}
			if !dropping {
				kept = append(kept, l)
			}
		}
		doc := strings.Join(kept, "\n") + "\n" + frag
		if _, err := manifest.Parse([]byte(doc)); err != nil {
			t.Errorf("example %d does not parse in the minimal manifest: %v\n%s", i+2, err, doc)
		}
	}
}
