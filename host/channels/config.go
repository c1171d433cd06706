package channels

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/tomltext"
)

// MaxConfigBytes bounds a channels configuration file.
const MaxConfigBytes = 256 << 10

// MaxConfiguredChannels bounds the channels one configuration declares.
const MaxConfiguredChannels = 256

// ErrInvalidConfig is the error of ParseConfig.
var ErrInvalidConfig = errcode.New("channel_config_invalid", "invalid channels configuration")

// Types of configured channels.
const (
	TypeLog     = "log"
	TypeWebhook = "webhook"
	TypePubSub  = "pubsub"
)

// Spec is one configured channel:
//
//	[[channels]]
//	name = "ops-alerts"
//	type = "webhook"          # log | webhook | pubsub
//	url  = "https://hooks.example.com/palyra"
type Spec struct {
	Name string `toml:"name"`
	Type string `toml:"type"`
	// URL is the webhook's target (type webhook only): absolute http(s),
	// no user info. The egress rules judge it again at every delivery.
	URL string `toml:"url"`
}

type configFile struct {
	Channels []Spec `toml:"channels"`
}

// ParseConfig decodes a channels configuration (TOML, a [[channels]] array
// of tables). Unknown keys, duplicate names, unknown types and webhooks
// without a valid URL are errors naming the entry.
func ParseConfig(data []byte) ([]Spec, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit (MaxConfigBytes)", ErrInvalidConfig, len(data), MaxConfigBytes)
	}
	var f configFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidConfig, tomltext.Describe(err))
	}
	return ValidateSpecs(f.Channels)
}

// ValidateSpecs checks configured channels (names, types, webhook URLs,
// duplicates, the count) and returns them trimmed. ParseConfig calls it; a
// daemon that embeds [[channels]] in its own configuration calls it too.
func ValidateSpecs(specs []Spec) ([]Spec, error) {
	if len(specs) > MaxConfiguredChannels {
		return nil, fmt.Errorf("%w: %d channels, over the limit of %d", ErrInvalidConfig, len(specs), MaxConfiguredChannels)
	}
	seen := map[string]bool{}
	for i := range specs {
		s := &specs[i]
		at := fmt.Sprintf("channels[%d]", i)
		s.Name, s.Type, s.URL = strings.TrimSpace(s.Name), strings.TrimSpace(s.Type), strings.TrimSpace(s.URL)
		if err := ValidateName(s.Name); err != nil {
			return nil, fmt.Errorf("%w: %s.name: %w", ErrInvalidConfig, at, err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%w: %s.name: %q is declared twice", ErrInvalidConfig, at, s.Name)
		}
		seen[s.Name] = true
		switch s.Type {
		case TypeWebhook:
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
				return nil, fmt.Errorf("%w: %s.url: must be an absolute http(s) URL without user info", ErrInvalidConfig, at)
			}
		case TypeLog, TypePubSub:
			if s.URL != "" {
				return nil, fmt.Errorf("%w: %s.url: only a webhook channel has a url", ErrInvalidConfig, at)
			}
		default:
			return nil, fmt.Errorf("%w: %s.type: %q is not one of log, webhook, pubsub", ErrInvalidConfig, at, s.Type)
		}
	}
	return specs, nil
}
