package desired

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const good = `version = 1

[[skill]]
id = "Acme.Echo"
oci = "oci://127.0.0.1:5000/skills/echo"
version = "^1.1"
plain_http = true

[skill.accept]
http_hosts = ["API.example.com."]
secrets = ["skill:acme.echo/token"]

[[skill]]
id = "acme.log"
registry_dir = "/srv/registry"

[[hook]]
id = "log"
event = "skill:quarantined"
skill = "acme.log"
enabled = false
`

func TestParse(t *testing.T) {
	d, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Skills) != 2 || d.Skills[0].ID != "acme.echo" || !d.Skills[0].PlainHTTP || d.Hooks[0].IsEnabled() {
		t.Fatalf("parsed %+v", d)
	}
	if v, ok := d.Skills[0].Pick([]string{"1.0.0", "1.1.0", "1.4.2", "2.0.0", "latest", "1.5.0-rc.1"}); !ok || v != "1.4.2" {
		t.Fatalf("pick under ^1.1: %q %t", v, ok)
	}
	if v, ok := d.Skills[1].Pick([]string{"0.1.0", "3.0.0", "2.9.9"}); !ok || v != "3.0.0" {
		t.Fatalf("pick without a constraint: %q %t", v, ok)
	}
	if v, ok := d.Skills[1].Pick([]string{"1.0.0", "1.1.0-rc.1"}); !ok || v != "1.0.0" {
		t.Fatalf("pick without a constraint took a pre-release: %q %t", v, ok)
	}
	if _, ok := d.Skills[0].Pick([]string{"0.9.0", "2.0.0"}); ok {
		t.Fatal("picked a version outside the constraint")
	}
	if !d.Skills[0].Allows("1.2.0") || d.Skills[0].Allows("2.0.0") || d.Skills[0].Allows("x") {
		t.Fatal("Allows disagrees with ^1.1")
	}
	ex := d.Skills[0].Accept.Excess([]string{"api.example.com", "evil.example"}, []string{"skill:acme.echo/token", "global/other"}, []string{"notes"}, nil, nil, nil, true)
	want := []string{"+ http host evil.example", "+ secret global/other", "+ storage prefix notes", "+ secret values readable by the guest"}
	if !slices.Equal(ex, want) {
		t.Fatalf("excess %q, want %q", ex, want)
	}
}

func TestParseRefusals(t *testing.T) {
	skill := func(body string) string { return "version = 1\n[[skill]]\nid = \"a.b\"\n" + body }
	for _, tc := range []struct{ name, doc, want string }{
		{"no version", "[[skill]]\nid = \"a\"\noci = \"oci://r/a\"\n", "version: 0"},
		{"a future version", "version = 2\n", "version: 2"},
		{"unknown key", skill("oci = \"oci://r/a\"\ncolour = 1\n"), "unknown key skill.colour"},
		{"unknown accept key", skill("oci = \"oci://r/a\"\n[skill.accept]\nhosts = []\n"), "unknown key skill.accept.hosts"},
		{"no source", skill(""), "skill[0] (a.b): give exactly one"},
		{"two sources", skill("oci = \"oci://r/a\"\nregistry_dir = \"/d\"\n"), "got 2"},
		{"a tag", skill("oci = \"oci://r:5000/a:1.0.0\"\n"), "names a tag or digest"},
		{"a digest", skill("oci = \"oci://r/a@sha256:00\"\n"), "names a tag or digest"},
		{"plain http to an index", skill("registry_dir = \"/d\"\nplain_http = true\n"), "plain_http"},
		{"a CA certificate for a directory", skill("registry_dir = \"/d\"\nregistry_ca_cert = \"x\"\n"), "skill[0].registry_ca_cert (a.b): only with registry_url"},
		{"a CA certificate without PEM", skill("registry_url = \"https://r/index.json\"\nregistry_ca_cert = \"not pem\"\n"), "skill[0].registry_ca_cert (a.b): not a PEM certificate"},
		{"a bad constraint", skill("oci = \"oci://r/a\"\nversion = \"^^1\"\n"), `skill[0].version (a.b): "^^1" is not a semver constraint`},
		{"no id", "version = 1\n[[skill]]\noci = \"oci://r/a\"\n", "skill[0].id: missing"},
		{"a duplicate id", skill("oci = \"oci://r/a\"\n[[skill]]\nid = \"A.B\"\noci = \"oci://r/b\"\n"), `skill[1].id: "a.b" is declared already by skill[0]`},
		{"a hook without skill", "version = 1\n[[hook]]\nid = \"h\"\nevent = \"e\"\n", "hook[0] (h): event and skill are required"},
		{"a duplicate hook", "version = 1\n[[hook]]\nid = \"h\"\nevent = \"e\"\nskill = \"s\"\n[[hook]]\nid = \"h\"\nevent = \"e\"\nskill = \"s\"\n", `hook[1].id: "h" is declared already`},
		{"a duplicate hook in another case", "version = 1\n[[hook]]\nid = \"h\"\nevent = \"e\"\nskill = \"s\"\n[[hook]]\nid = \" H \"\nevent = \"e\"\nskill = \"s\"\n", `hook[1].id: "h" is declared already by hook[0]`},
		{"a negative timeout", "version = 1\n[[hook]]\nid = \"h\"\nevent = \"e\"\nskill = \"s\"\ntimeout_ms = -1\n", "timeout_ms (h): -1 is negative"},
		{"not TOML", "version = = 1", "line 1"},
		{"too large", "version = 1\n#" + strings.Repeat("x", MaxDocumentBytes), "over the 1048576-byte limit"},
		{"too many skills", "version = 1\n" + strings.Repeat("[[skill]]\n", MaxSkills+1), "1001 skills, over the limit of 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidDocument saying %q", err, tc.want)
			}
		})
	}
}
