package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/internal/fsutil"
)

func (a *app) feedCommand() *cobra.Command {
	return group("feed", "Install, show and sign the signed deny feed (known-bad modules, artifacts and publisher keys)",
		a.feedUpdateCommand(), a.feedShowCommand(), a.feedSignCommand())
}

func (a *app) feedUpdateCommand() *cobra.Command {
	var (
		sf      stateFlags
		trusted []string
	)
	c := &cobra.Command{
		Use: "update FILE [--trusted-publisher ISSUER=HEX...]",
		Example: "  palyra feed update deny-feed.json\n" +
			"  palyra feed update deny-feed.json --trusted-publisher acme-security=9f2c…(64 hex)\n" +
			"  palyra feed update deny-feed.json --url http://127.0.0.1:7431 -o json",
		Short: "Install a signed deny feed (verified against the trust store), then re-audit every installed skill",
		Long: "Installs FILE, a signed deny feed (docs/deny-feed.md), in the state directory (through the daemon with --url). " +
			"The feed must be signed by a key the trust store allowlists for its issuer (--trusted-publisher ISSUER=HEX allowlists one " +
			"with it, persisted once the feed verifies; a TOFU pin never counts) and its serial must be newer than the installed feed's. " +
			"Every installed version is then re-audited: each one the feed denies is quarantined with the entry's reason and reference.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := parseTrusted(trusted)
			if err != nil {
				return err
			}
			data, err := readSmallFile(args[0], feed.MaxFileBytes)
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &sf, append([]string{"trusted-publisher"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			res, err := sv.UpdateDenyFeed(a.actor(cmd), host.UpdateDenyFeedRequest{Feed: data, TrustedPublishers: keys})
			if err != nil && res == nil {
				return err
			}
			if eerr := a.emit(res, feedUpdateText(res, a.wide())); eerr != nil {
				return eerr
			}
			return err
		},
	}
	c.Flags().StringArrayVar(&trusted, "trusted-publisher", nil, "allowlist ISSUER=PUBLIC_KEY_HEX with the feed (repeatable; persisted once the feed verifies with it; local only)")
	sf.register(c, true)
	a.registerDaemonFlags(c)
	return c
}

// feedUpdateText is the text of feed update: the feed installed, then each
// version the re-audit quarantined, with why.
func feedUpdateText(res *host.DenyFeedUpdate, wide bool) string {
	f := res.Feed
	var b strings.Builder
	b.WriteString("feed.update " + output.KV("issuer", f.Issuer, "serial", f.Serial, "previous_serial", res.PreviousSerial,
		"changed", res.Changed, "entries", len(f.Entries), "checked", res.Reaudit.Checked, "quarantined", res.Reaudit.Quarantined))
	t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "reasons"})
	for _, o := range res.Reaudit.Outcomes {
		if o.Quarantined {
			t.Row(o.SkillID, o.Version, strings.Join(o.Reasons, "; "))
		}
	}
	if t.Len() > 0 {
		b.WriteString("\nQuarantined now:\n" + strings.TrimRight(t.String(wide), "\n"))
	}
	return b.String()
}

func (a *app) feedShowCommand() *cobra.Command {
	sf := stateFlags{readOnly: true}
	c := &cobra.Command{
		Use:     "show",
		Example: "  palyra feed show\n  palyra feed show -o wide\n  palyra feed show -o json",
		Short:   "Print the installed deny feed: issuer, serial, entries, when and by whom it was installed",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			info, err := sv.DenyFeed(cmd.Context())
			if err != nil {
				return err
			}
			return a.emit(info, feedShowText(info, a.wide()))
		},
	}
	sf.register(c, false)
	a.registerDaemonFlags(c)
	return c
}

// feedShowText is the text of feed show; -o wide shows whole values.
func feedShowText(f *host.DenyFeedInfo, wide bool) string {
	if !f.Installed {
		return "No deny feed is installed (palyra feed update FILE installs one)."
	}
	var b strings.Builder
	if f.Error != "" {
		fmt.Fprintf(&b, "Error:       %s (%s)\n", output.QuoteLine(f.Error), f.Code)
	}
	fmt.Fprintf(&b, "Issuer:      %s\nSerial:      %d\nIssued at:   %s\n", output.QuoteLine(f.Issuer), f.Serial, f.IssuedAt.Format(time.RFC3339))
	if f.KeyID != "" {
		fmt.Fprintf(&b, "Signed by:   %s\n", f.KeyID)
	}
	fmt.Fprintf(&b, "Updated at:  %s by %s\nFile:        %s\nEntries:     %d\n", f.UpdatedAt.Format(time.RFC3339), output.QuoteLine(f.UpdatedBy), output.QuoteLine(f.Path), len(f.Entries))
	t := output.NewTable(output.Column{Header: "kind"}, output.Column{Header: "value"}, output.Column{Header: "reference", Wide: true}, output.Column{Header: "reason"})
	for _, e := range f.Entries {
		v := e.Value
		if !wide && len(v) > 16 {
			v = v[:16] + "…"
		}
		t.Row(e.Kind, v, e.Reference, e.Reason)
	}
	if t.Len() > 0 {
		b.WriteString(strings.TrimRight(t.String(wide), "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// feedSignReport is what feed sign wrote.
type feedSignReport struct {
	Out     string `json:"out"`
	Issuer  string `json:"issuer"`
	Serial  uint64 `json:"serial"`
	Entries int    `json:"entries"`
	KeyID   string `json:"key_id"`
}

func (a *app) feedSignCommand() *cobra.Command {
	var out string
	key := keySource{what: "signing key", fileFlag: "key", vaultFlag: "vault-ref"}
	c := &cobra.Command{
		Use: "sign FEED.json --out FILE (--key FILE | --vault-ref SCOPE/KEY)",
		Example: "  palyra feed sign feed.json --key acme-security.key --out deny-feed.json\n" +
			"  palyra feed sign feed.json --vault-ref signing/acme-security --out deny-feed.json",
		Short: "Sign a deny feed document (an issuer's tool): writes the signed feed that palyra feed update installs",
		Long: "Reads FEED.json, the feed document {schema_version, issuer, serial, issued_at, entries} (issued_at may be left out: " +
			"now is used), validates it, and writes the DSSE envelope signed with the issuer's Ed25519 key to --out (which must not exist).",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readSmallFile(args[0], feed.MaxFileBytes)
			if err != nil {
				return err
			}
			var doc feed.Feed
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				return fmt.Errorf("%w: %s: %v", feed.ErrInvalidFeed, args[0], err)
			}
			if doc.IssuedAt.IsZero() {
				doc.IssuedAt = time.Now().UTC().Truncate(time.Second)
			}
			priv, err := key.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			signed, err := feed.Sign(doc, priv)
			if err != nil {
				return err
			}
			if err := fsutil.WriteExclusive(out, signed, 0o644); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%w: --out %s exists (a signed feed is never overwritten)", errUsage, out)
				}
				return fmt.Errorf("%w: %v", errIO, err)
			}
			s, err := feed.Parse(signed)
			if err != nil {
				return err
			}
			r := feedSignReport{Out: out, Issuer: s.Feed.Issuer, Serial: s.Feed.Serial, Entries: len(s.Feed.Entries), KeyID: s.Envelope.Signatures[0].KeyID}
			return a.emit(r, "feed.sign "+output.KV("out", r.Out, "issuer", r.Issuer, "serial", r.Serial, "entries", r.Entries, "key", r.KeyID))
		},
	}
	c.Flags().StringVar(&out, "out", "", "file to write the signed feed to (must not exist)")
	key.register(c)
	requireFlags(c, "out")
	return c
}
