package policy_test

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
)

func loadEcho() *manifest.Manifest {
	data, err := os.ReadFile("../../testdata/vectors/palyra-echo-http-example/skill.toml")
	if err != nil {
		panic(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		panic(err)
	}
	return m
}

// The default profile grants Palyra's echo-http example exactly what it
// declares; the grants become handles in this order.
func ExampleProfile_Evaluate() {
	d, err := policy.Default().Evaluate(loadEcho())
	if err != nil {
		panic(err)
	}
	fmt.Println("allowed:", d.Allowed())
	for i, h := range d.Grants.HTTPHosts {
		fmt.Println("http handle", 10000+i, h)
	}
	for i, k := range d.Grants.SecretKeys {
		fmt.Println("secret handle", 20000+i, k)
	}
	for i, p := range d.Grants.StoragePrefixes {
		mode := "read-write"
		if slices.Contains(d.Grants.StorageReadOnly, p) {
			mode = "read-only"
		}
		fmt.Println("storage handle", 30000+i, p, mode)
	}
	fmt.Println("fuel", d.Limits.Fuel, "memory", d.Limits.MaxMemoryBytes, "wall clock", d.Limits.WallClock)
	// Output:
	// allowed: true
	// http handle 10000 api.example.com
	// secret handle 20000 skill:acme.echo_http/api_token
	// storage handle 30000 skills/cache read-write
	// storage handle 30001 skills/data read-only
	// fuel 5000000 memory 33554432 wall clock 2s
}

// A profile that does not cover a request refuses the skill, naming the
// capability: the installer quarantines it with these reasons.
func ExampleDecision_Reasons() {
	p, err := policy.Parse([]byte(`
[http]
allowed_hosts = ["*.githubusercontent.com"]

[secrets]
allowed = ["skill:*/api_token"]

[quotas]
max_fuel = 1000000
`))
	if err != nil {
		panic(err)
	}
	d, err := p.Evaluate(loadEcho())
	if err != nil {
		panic(err)
	}
	for _, r := range d.Reasons() {
		fmt.Println(r)
	}
	err = d.Err()
	fmt.Println(errors.Is(err, policy.ErrViolation), errcode.Of(err))
	fmt.Println("fuel limit still applied:", d.Limits.Fuel)
	// Output:
	// policy_violation: capabilities.http_egress_allowlist[0] "api.example.com": host not allowed by the operator profile (http.allowed_hosts)
	// policy_violation: capabilities.quotas.fuel_budget "5000000": above the operator profile's cap (quotas.max_fuel = 1000000)
	// true policy_violation
	// fuel limit still applied: 1000000
}

// Parse is strict: an unknown key is an error naming its path.
func ExampleParse() {
	_, err := policy.Parse([]byte("[http]\nallowed_host = [\"api.example.com\"]\n"))
	fmt.Println(err)
	fmt.Println(errcode.Of(err))
	// Output:
	// policy: http.allowed_host: unknown key
	// invalid_policy_profile
}

// Diff shows what an upgrade asks for beyond the installed version.
func ExampleDiff() {
	installed, _ := policy.Default().Evaluate(loadEcho())
	m := loadEcho()
	m.Capabilities.HTTPEgressAllowlist = append(m.Capabilities.HTTPEgressAllowlist, "api2.example.com")
	m.Capabilities.Quotas.FuelBudget = 20_000_000
	candidate, _ := policy.Default().Evaluate(m)
	esc := policy.Diff(installed, candidate)
	for _, l := range esc.Lines() {
		fmt.Println(l)
	}
	fmt.Println(errcode.Of(esc.Err()))
	// Output:
	// + http host api2.example.com
	// + fuel 5000000 -> 20000000
	// capability_escalation
}
