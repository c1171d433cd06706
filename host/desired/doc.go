// Package desired reads a desired-state document: the skills a host should
// run, where each comes from, which versions are acceptable and which
// capabilities the operator accepts for it, and the hook bindings. The
// engine that converges a host on it is host.ApplyTo (palyra apply, POST
// /v1/apply); this package only parses and validates, and picks versions.
//
// # Format (palyra.toml)
//
//	version = 1                                # the format's version; required
//
//	[[skill]]
//	id = "palyra.http_fetch"                   # the skill id; unique in the document
//	oci = "oci://registry.example/skills/http-fetch"   # an OCI repository (no tag: versions are tags)
//	# or: registry_url = "https://skills.example/index.json"  (a signed index)
//	# or: registry_dir = "/srv/registry"                       (a local registry, on the host that applies)
//	# registry_ca_cert = """-----BEGIN CERTIFICATE-----…"""  (PEM CAs for registry_url's TLS, besides the host's)
//	version = "^1.1"                           # a semver constraint; default: any (the highest)
//	allow_tofu = false                         # pin an unknown publisher key on first use
//	plain_http = false                         # OCI registry on a loopback address over HTTP
//
//	[skill.accept]                             # what the operator accepts this skill to be granted
//	http_hosts = ["api.example.com"]
//	secrets = ["skill:palyra.http_fetch/api_token"]
//	storage_prefixes = []
//	channels = []
//	device_capabilities = []
//	node_capabilities = []
//	secret_read = false                        # the guest may read secret values
//
//	[[hook]]
//	id = "audit-quarantines"                   # the binding's id; unique
//	event = "skill:quarantined"
//	skill = "palyra.event_log"                 # the hook skill
//	tool = "palyra.on_event"                   # optional: the manifest's default tool
//	enabled = true                             # default true
//	timeout_ms = 0                             # default: the host's hook timeout
//
// Every key is checked: an unknown key is refused with its path, as is a
// skill with no source or two, a constraint that does not parse, or a
// duplicate skill or hook id. Sizes have named limits (MaxDocumentBytes,
// MaxSkills, MaxHooks).
//
// Skill and hook ids are trimmed and lower-cased, as the inventory and the
// hook store keep them, so ids differing in case are duplicates. Without a
// version constraint the highest release is picked; a pre-release only by
// a constraint that names one.
//
// Accept covers what a version is granted (hosts, secrets, storage,
// channels, device and node capabilities, secret reads). Quotas (fuel,
// memory, time) are the operator profile's to bound (policy.toml), not the
// document's. A skill's operator configuration has no place here yet: the
// host has no per-skill operator configuration.
//
// The full reference, with how apply plans and its refusal codes, is
// docs/desired-state.md.
package desired
