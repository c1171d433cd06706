package broker

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/palyra-go/palyra/sdk/abi"
)

// splitSecret splits a secret grant "<scope>/<key>" (the scope never holds
// a '/').
func splitSecret(grant string) (scope, key string) {
	scope, key, _ = strings.Cut(grant, "/")
	return scope, key
}

// secretGrant resolves a secret handle with the invocation's grants.
func (op *operation) secretGrant(h int32) (string, error) {
	g := op.in.Grants.SecretKeys
	i := int(h - abi.SecretHandleBase)
	if h < abi.SecretHandleBase || i >= len(g) {
		return "", refuse(abi.CodeNotGranted, "not_granted", "secret handle %d is not granted to this call", h)
	}
	return g[i], nil
}

// secretValue returns the name and value of the secret behind handle h.
// The value is remembered so that no message can carry it.
func (op *operation) secretValue(ctx context.Context, h int32) (string, []byte, error) {
	name, err := op.secretGrant(h)
	if err != nil {
		return "", nil, err
	}
	scope, key := splitSecret(name)
	if strings.Contains(key, "*") {
		return name, nil, refuse(abi.CodeInvalidRequest, "invalid_request", "secret grant %s is a pattern, not one secret", name)
	}
	if op.b.cfg.Secrets == nil {
		return name, nil, refuse(abi.CodeUnavailable, "unavailable", "no secret vault is configured on this host")
	}
	v, found, err := op.b.cfg.Secrets.Lookup(ctx, scope, key)
	if err != nil {
		return name, nil, err
	}
	if !found {
		return name, nil, refuse(abi.CodeUnavailable, "secret_missing", "secret %s has no value in the vault (set it with: palyra secrets set %s)", name, name)
	}
	op.secrets = append(op.secrets, v)
	return name, v, nil
}

type secretRequestDoc struct {
	Op string `json:"op"`
}

type secretDescribeDoc struct {
	Scope   string `json:"scope"`
	Key     string `json:"key"`
	Present bool   `json:"present"`
}

type secretReadDoc struct {
	Value       *string `json:"value,omitempty"`
	ValueBase64 []byte  `json:"value_base64,omitempty"`
}

func (op *operation) secret(ctx context.Context, grant string) ([]byte, error) {
	var doc secretRequestDoc
	if err := decodeStrict(op.req.Request, &doc); err != nil {
		return nil, err
	}
	scope, key := splitSecret(grant)
	switch doc.Op {
	case "describe":
		present := false
		if op.b.cfg.Secrets != nil && !strings.Contains(key, "*") {
			_, found, err := op.b.cfg.Secrets.Lookup(ctx, scope, key)
			if err != nil {
				return nil, err
			}
			present = found
		}
		return mustJSON(secretDescribeDoc{Scope: scope, Key: key, Present: present}), nil
	case "read":
		if !op.in.Grants.SecretRead {
			return nil, deny("secret_read_disabled", "reading secret %s is disabled by the operator policy (secrets.allow_read = false); inject it into an HTTP request with secret_headers instead", grant)
		}
		_, v, err := op.secretValue(ctx, op.req.Handle)
		if err != nil {
			return nil, err
		}
		op.log.Info("secret read by guest", "secret", grant)
		op.in.st.add(func(s *Stats) { s.SecretReads++ })
		var out secretReadDoc
		if utf8.Valid(v) {
			s := string(v)
			out.Value = &s
		} else {
			out.ValueBase64 = v
		}
		return mustJSON(out), nil
	}
	return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "unknown secret op %q (describe, read)", doc.Op)
}
