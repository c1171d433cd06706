// Command http-fetch is a Palyra-Go skill that GETs one URL on an
// allowlisted host through the HTTP capability, optionally with an API
// token the host injects as a bearer header. Build it (from the repository
// root) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o http-fetch.wasm ./sdk/examples/http-fetch
package main

import (
	"bytes"
	"unicode/utf8"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

const (
	// defaultMaxBody is how much of the body is returned when the input
	// does not say.
	defaultMaxBody = 16 << 10
	// maxMaxBody caps max_body_bytes (the input schema says the same).
	maxMaxBody = 64 << 10
)

// FetchIn is the input of palyra.http_fetch.
type FetchIn struct {
	URL          string `json:"url"`
	UseToken     bool   `json:"use_token"`
	MaxBodyBytes int    `json:"max_body_bytes"`
}

// FetchOut is the output of palyra.http_fetch.
type FetchOut struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Truncated   bool   `json:"truncated"`
}

func init() {
	skill.Handle("palyra.http_fetch", fetch)
}

func fetch(ctx *skill.Context, in FetchIn) (FetchOut, error) {
	var secrets []skill.SecretHeader
	if in.UseToken {
		// The host replaces {secret} with the value of the granted secret
		// skill:palyra.http_fetch/api_token; this module never sees it.
		secrets = append(secrets, skill.SecretHeader{Name: "authorization", Secret: "api_token", Format: "Bearer {secret}"})
	}
	resp, err := ctx.HTTP().Get(in.URL, secrets...)
	if err != nil {
		return FetchOut{}, err
	}
	limit := in.MaxBodyBytes
	if limit <= 0 {
		limit = defaultMaxBody
	}
	limit = min(limit, maxMaxBody)
	body, truncated := resp.Body, false
	if len(body) > limit {
		// Cut at limit, moved back to a rune start so no rune is split.
		cut := limit
		for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(body[cut]); i++ {
			cut--
		}
		body, truncated = body[:cut], true
	}
	ctx.Logf(skill.LevelInfo, "GET %s: %d, %d bytes", in.URL, resp.Status, len(resp.Body))
	return FetchOut{
		Status:      resp.Status,
		ContentType: resp.Header["content-type"],
		Body:        string(bytes.ToValidUTF8(body, []byte("\uFFFD"))),
		Truncated:   truncated,
	}, nil
}

func main() {}
