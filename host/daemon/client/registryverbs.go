package client

import (
	"context"
	"fmt"
	"net/url"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/install"
)

// installBody is the JSON body of POST /v1/skills that installs from a
// registry (the daemon fetches the artifact).
type installBody struct {
	host.SourceRef
	AllowTOFU          bool `json:"allow_tofu,omitempty"`
	AcceptCapabilities bool `json:"accept_capabilities,omitempty"`
	Force              bool `json:"force,omitempty"`
	DryRun             bool `json:"dry_run,omitempty"`
}

// installFrom is Install with req.From: POST /v1/skills with the source as
// JSON; the daemon fetches the artifact. Trusted publishers are refused,
// as for an upload.
func (c *Client) installFrom(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	if len(req.Artifact) > 0 {
		return nil, fmt.Errorf("client: %w: give the artifact or a source to fetch it from, not both", install.ErrInvalidArgument)
	}
	if len(req.TrustedPublishers) > 0 {
		return nil, fmt.Errorf("client: %w: trusted publishers are allowlisted in the daemon's trust store, not with an install from a source", install.ErrInvalidArgument)
	}
	body := installBody{SourceRef: *req.From, AllowTOFU: req.AllowTOFU, AcceptCapabilities: req.AcceptCapabilities, Force: req.Force, DryRun: req.DryRun}
	var out host.InstallResult
	err := c.postJSON(ctx, "/v1/skills", body, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// Outdated implements host.Service: GET /v1/skills/outdated.
func (c *Client) Outdated(ctx context.Context, req host.OutdatedRequest) (*host.OutdatedReport, error) {
	q := url.Values{}
	if req.SkillID != "" {
		q.Set("skill_id", req.SkillID)
	}
	setBools(q, map[string]bool{"allow_tofu": req.AllowTOFU})
	var out host.OutdatedReport
	if err := c.get(ctx, "/v1/skills/outdated", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update implements host.Service: POST /v1/skills/{id}/update. A refused
// escalation returns the result (with its capability diff) and the error.
func (c *Client) Update(ctx context.Context, req host.UpdateRequest) (*host.UpdateResult, error) {
	var out host.UpdateResult
	err := c.postJSON(ctx, "/v1/skills/"+esc(req.SkillID)+"/update", req, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// Apply implements host.Service: POST /v1/apply. A failed step returns
// the result (the plan, each step's outcome) and the error.
func (c *Client) Apply(ctx context.Context, req host.ApplyRequest) (*host.ApplyResult, error) {
	var out host.ApplyResult
	err := c.postJSON(ctx, "/v1/apply", req, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}
