package manifest_test

import (
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/host/manifest"
)

func ExampleParse() {
	m, err := manifest.Parse([]byte(`
manifest_version = 2
skill_id = "acme.echo_http"
name = "Echo"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.echo"
name = "echo"
description = "Echo payload"
input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
output_schema = { type = "object" }

[capabilities]
http_egress_allowlist = ["api.example.com"]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.SkillID, m.Version, m.Capabilities.Quotas.FuelBudget)
	fmt.Println(manifest.CheckCompat(m))
	for _, w := range m.Warnings() {
		fmt.Println("warning:", w.Code)
	}
	for _, b := range m.PolicyBindings() {
		fmt.Println(b.Action, b.Resource, b.RequiresApproval)
	}

	schemas, _ := m.ToolSchemas("acme.echo")
	err = schemas.ValidateInputJSON([]byte(`{"text": 42}`))
	var ie *manifest.InstanceError
	if errors.As(err, &ie) {
		fmt.Println(errors.Is(err, manifest.ErrInputSchema), ie.Location)
	}
	// Output:
	// acme.echo_http 1.0.0 10000000
	// <nil>
	// warning: missing_operator_metadata
	// skill.capability.http.egress skill:acme.echo_http true
	// tool.execute tool:acme.echo false
	// true /text
}

func ExampleParse_error() {
	_, err := manifest.Parse([]byte(`
skill_id = "acme.echo_http"
name = "Echo"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "other.echo"
name = "echo"
description = "Echo payload"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`))
	var fe *manifest.FieldError
	if errors.As(err, &fe) {
		fmt.Println(errors.Is(err, manifest.ErrValidation), fe.Path, fe.Line)
	}
	fmt.Println(err)
	// Output:
	// true entrypoints.tools[0].id 8
	// manifest: entrypoints.tools[0].id: must start with publisher prefix "acme.", found "other.echo"
}
