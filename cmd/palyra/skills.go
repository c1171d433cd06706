package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/fsutil"
	"github.com/spf13/cobra"
)

func (a *app) skillsCommand() *cobra.Command {
	c := group("skills", "Work with skills",
		group("package", "Build, verify and inspect .palyra-skill artifacts",
			a.packageBuildCommand(), a.packageVerifyCommand(), a.packageInspectCommand()))
	c.AddCommand(a.registryCommand())
	c.Aliases = []string{"skill"}
	c.Long = "skills packages, verifies, installs, inspects, gates and runs skills.\n\n" +
		"The package verbs work on files. The lifecycle verbs (list, info, install, verify, audit, quarantine, enable, disable, remove, reaudit) and run " +
		"work on the state directory (--state-dir), also while a daemon serves it (the daemon picks up their changes), or through a daemon.\n\n" + daemonModeHelp
	c.AddCommand(a.lifecycleCommands()...)
	c.AddCommand(a.runCommand(), a.loopCommand())
	c.AddCommand(a.pushCommand())
	c.AddCommand(a.skillsNewCommand())
	a.registerDaemonFlags(c)
	a.installPalyraSkillsFlags(c)
	return c
}

// buildReport is the result of skills package build: Palyra's JSON shape,
// plus the entries packaged, the documents generated and the manifest's
// warnings.
type buildReport struct {
	ArtifactPath   string   `json:"artifact_path"`
	PayloadSHA256  string   `json:"payload_sha256"`
	Publisher      string   `json:"publisher"`
	SkillID        string   `json:"skill_id"`
	Version        string   `json:"version"`
	SignatureKeyID string   `json:"signature_key_id"`
	ArtifactBytes  int      `json:"artifact_bytes"`
	Modules        []string `json:"modules"`
	Assets         []string `json:"assets"`
	Generated      []string `json:"generated"`
	// Warnings are the manifest's warnings, as verify and audit will
	// report them.
	Warnings []manifest.Warning `json:"warnings"`
}

func (a *app) packageBuildCommand() *cobra.Command {
	var (
		fl  buildFlags
		key = keySource{what: "signing key", fileFlag: "signing-key", stdinFlag: "signing-key-stdin", vaultFlag: "signing-key-vault-ref"}
	)
	c := &cobra.Command{
		Use:   "build (--dir D | --manifest M --module W... --output O) [--asset A...] [--sbom S] [--provenance P] (--signing-key FILE | --signing-key-stdin | --signing-key-vault-ref SCOPE/KEY)",
		Short: "Build and sign a .palyra-skill artifact",
		Long: "build packages a skill: it validates skill.toml (reporting every problem at once), fills in its integrity list, signs the payload with Ed25519 and writes a deterministic ZIP.\n\n" +
			"--dir D builds a skill project (as palyra skills new writes it): every file flag left out is found there: D/skill.toml; the modules D/*.wasm and D/modules/**/*.wasm; " +
			"the assets D/assets/** (hidden files left out); D/sbom.cdx.json and D/provenance.json when present; and the artifact is written to D/<skill_id>-<version>.palyra-skill. " +
			"Without --dir, --manifest, --module and --output are required.\n\n" +
			"When no SBOM or provenance is given (by flag or in D), build generates them from what it packages: a CycloneDX 1.6 SBOM (the skill, each module and asset with its SHA-256) " +
			"and an in-toto Statement v1 with a SLSA Provenance v1 predicate (the modules as subjects); the report names the generated ones. Given files are used as given. The report also lists the manifest's warnings (verify and audit report them too).\n\n" +
			"A relative --module/--asset path is kept whole under modules/ or assets/ (crates/x/m.wasm becomes modules/crates/x/m.wasm); an absolute path keeps only its file name. " +
			"A module found under D/modules or an asset under D/assets keeps its path below that folder.\n" +
			"signature.json and the generated documents record the build time: now, or $SOURCE_DATE_EPOCH when set, so that the same inputs give byte-identical artifacts.\n" +
			"The signing key is 32 raw bytes, or hex or standard base64 of 32 bytes (the Ed25519 seed), from --signing-key FILE, --signing-key-stdin, or --signing-key-vault-ref SCOPE/KEY (the state directory's encrypted vault; palyra keys generate --vault-ref signing/NAME puts a new key there, and the key is then never on disk in clear).",
		Example: "  # Build the project palyra skills new wrote (after building its module), signing with a vault key\n" +
			"  palyra skills package build --dir ./wordcount --signing-key-vault-ref signing/acme\n\n" +
			"  # Name every file, as Palyra's CLI does\n" +
			"  palyra skills package build --manifest skill.toml --module module.wasm --asset assets/prompt.txt \\\n" +
			"    --sbom sbom.cdx.json --provenance provenance.json --output acme.echo-1.0.0.palyra-skill --signing-key ./signing.key",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := fl.plan()
			if err != nil {
				return err
			}
			priv, err := key.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			signedAt, err := signingTime()
			if err != nil {
				return err
			}
			in := artifact.BuildInput{
				SigningKey: priv,
				SignedAt:   signedAt,
				Generate:   &artifact.Generate{BuilderVersion: palyraVersion(), Now: func() time.Time { return signedAt }},
			}
			if in.Manifest, err = readSmallFile(plan.manifest, maxSmallFileBytes); err != nil {
				return err
			}
			if plan.sbom != "" {
				if in.SBOM, err = readSmallFile(plan.sbom, maxSmallFileBytes); err != nil {
					return err
				}
			}
			if plan.provenance != "" {
				if in.Provenance, err = readSmallFile(plan.provenance, maxSmallFileBytes); err != nil {
					return err
				}
			}
			for _, m := range plan.modules {
				if _, err := artifact.ModuleEntryPath(m.Name); err != nil {
					return err
				}
				data, err := readSmallFile(m.Disk, artifact.MaxEntryBytes)
				if err != nil {
					return err
				}
				in.Modules = append(in.Modules, artifact.File{Path: m.Name, Data: data})
			}
			for _, as := range plan.assets {
				if _, err := artifact.AssetEntryPath(as.Name); err != nil {
					return err
				}
				data, err := readSmallFile(as.Disk, artifact.MaxEntryBytes)
				if err != nil {
					return err
				}
				in.Assets = append(in.Assets, artifact.File{Path: as.Name, Data: data})
			}
			built, err := artifact.Build(in)
			if err != nil {
				return err
			}
			out := plan.output
			if out == "" {
				out = filepath.Join(fl.dir, strings.TrimSpace(built.Manifest.SkillID)+"-"+strings.TrimSpace(built.Manifest.Version)+".palyra-skill")
			}
			if err := fsutil.WriteAtomic(out, built.Bytes, 0o644); err != nil {
				return fmt.Errorf("%w: %v", errIO, err)
			}
			r := buildReport{
				ArtifactPath: out, PayloadSHA256: built.PayloadSHA256,
				Publisher: built.Manifest.Publisher, SkillID: built.Manifest.SkillID, Version: built.Manifest.Version,
				SignatureKeyID: built.Signature.KeyID, ArtifactBytes: len(built.Bytes),
				Modules: []string{}, Assets: []string{}, Generated: append([]string{}, built.Generated...),
				Warnings: built.Manifest.Warnings(),
			}
			for _, name := range slices.Sorted(maps.Keys(built.Entries)) {
				switch {
				case strings.HasPrefix(name, "modules/"):
					r.Modules = append(r.Modules, name)
				case strings.HasPrefix(name, "assets/"):
					r.Assets = append(r.Assets, name)
				}
			}
			text := "skills.package.build " + output.KV("artifact", r.ArtifactPath, "skill_id", r.SkillID, "publisher", r.Publisher, "version", r.Version,
				"payload_sha256", r.PayloadSHA256, "key_id", r.SignatureKeyID, "bytes", r.ArtifactBytes, "modules", strings.Join(r.Modules, ","), "assets", len(r.Assets))
			if len(r.Generated) > 0 {
				text += " " + output.KV("generated", strings.Join(r.Generated, ","))
			}
			for _, w := range r.Warnings {
				text += "\n  warning " + w.Code + ": " + w.Message
			}
			return a.emit(r, text)
		},
	}
	f := c.Flags()
	f.StringVar(&fl.dir, "dir", "", "skill project directory: finds skill.toml, modules, assets, SBOM and provenance there (see above)")
	f.StringVar(&fl.manifest, "manifest", "", "skill.toml (default D/skill.toml with --dir)")
	f.StringArrayVar(&fl.modules, "module", nil, "WebAssembly module (repeatable; at least one; default D/*.wasm and D/modules/**/*.wasm with --dir)")
	f.StringArrayVar(&fl.assets, "asset", nil, "asset file (repeatable; default D/assets/** with --dir)")
	f.StringVar(&fl.sbom, "sbom", "", "CycloneDX SBOM (sbom.cdx.json; default D/sbom.cdx.json with --dir, else generated)")
	f.StringVar(&fl.provenance, "provenance", "", "provenance document (provenance.json; default D/provenance.json with --dir, else generated)")
	f.StringVar(&fl.output, "output", "", "artifact file to write (default D/<skill_id>-<version>.palyra-skill with --dir)")
	key.register(c)
	return c
}

// signingTime is the time recorded in signature.json: now, or
// $SOURCE_DATE_EPOCH (seconds) for reproducible builds, so that the same
// inputs give the same artifact bytes.
func signingTime() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok {
		return time.Now(), nil
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 {
		return time.Time{}, fmt.Errorf("%w: SOURCE_DATE_EPOCH=%q is not a non-negative number of seconds", errUsage, v)
	}
	return time.Unix(secs, 0), nil
}

// trustFlags are the trust-store options shared by the commands that decide trust.
type trustFlags struct {
	trustStore string
	trusted    []string
}

func (t *trustFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&t.trustStore, "trust-store", "", "trust store file (default $PALYRA_SKILLS_TRUST_STORE, else <state>/skills/trust-store.json)")
	c.Flags().StringArrayVar(&t.trusted, "trusted-publisher", nil, "allowlist PUBLISHER=PUBLIC_KEY_HEX in the trust store (repeatable; persisted)")
}

// open resolves the trust store file and persists any --trusted-publisher entries.
func (a *app) openTrust(cmd *cobra.Command, t *trustFlags) (*trust.File, string, error) {
	layout, err := cliconfig.Layout(a.stateDir)
	if err != nil {
		return nil, "", err
	}
	path, err := cliconfig.TrustStore(layout, t.trustStore)
	if err != nil {
		return nil, "", err
	}
	v, err := a.openVault()
	if err != nil {
		return nil, "", err
	}
	f := trust.OpenFile(path, trust.WithVault(v))
	if len(t.trusted) == 0 {
		return f, path, nil
	}
	type pair struct{ publisher, key string }
	var pairs []pair
	for _, tp := range t.trusted {
		pub, key, ok := strings.Cut(tp, "=")
		if !ok || pub == "" || key == "" {
			return nil, "", fmt.Errorf("%w: --trusted-publisher %q: want PUBLISHER=PUBLIC_KEY_HEX", errUsage, tp)
		}
		pairs = append(pairs, pair{pub, key})
	}
	err = f.Update(cmd.Context(), func(s *trust.Store) (bool, error) {
		for _, p := range pairs {
			if err := s.AddTrusted(p.publisher, p.key); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

func (a *app) packageVerifyCommand() *cobra.Command {
	var (
		path      string
		allowTOFU bool
		tf        trustFlags
	)
	c := &cobra.Command{
		Use:     "verify --artifact A [--trust-store T] [--trusted-publisher PUB=HEX...] [--allow-tofu]",
		Example: "  palyra skills package verify --artifact acme.echo.palyra-skill --allow-tofu",
		Short:   "Verify an artifact's structure, signature and publisher trust",
		Long: "verify runs every structural and signature check of inspect, then decides trust: an allowlisted key is accepted; a publisher pinned on first use must keep its key; " +
			"an unknown publisher is refused unless --allow-tofu pins its key now (saved in the trust store).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, _, err := a.openTrust(cmd, &tf)
			if err != nil {
				return err
			}
			data, err := readSmallFile(path, artifact.MaxArtifactBytes)
			if err != nil {
				return err
			}
			rep, err := artifact.Verify(cmd.Context(), data, artifact.VerifyOptions{Trust: f.Decider(), AllowTOFU: allowTOFU})
			if err != nil {
				return err
			}
			return a.emit(rep, "skills.package.verify "+output.KV("accepted", rep.Accepted, "skill_id", rep.Manifest.SkillID, "version", rep.Manifest.Version, "publisher", rep.Manifest.Publisher, "trust_decision", rep.TrustDecision, "payload_sha256", rep.PayloadSHA256, "warnings", len(rep.ManifestWarnings)))
		},
	}
	c.Flags().StringVar(&path, "artifact", "", ".palyra-skill file")
	c.Flags().BoolVar(&allowTOFU, "allow-tofu", false, "pin an unknown publisher's key on first use")
	tf.register(c)
	requireFlags(c, "artifact")
	return c
}

// inspectReport is the result of skills package inspect.
type inspectReport struct {
	Artifact         string           `json:"artifact"`
	SkillID          string           `json:"skill_id"`
	Version          string           `json:"version"`
	Publisher        string           `json:"publisher"`
	PayloadSHA256    string           `json:"payload_sha256"`
	KeyID            string           `json:"key_id"`
	PublicKeyHex     string           `json:"public_key_hex"`
	SignedAtUnixMS   int64            `json:"signed_at_unix_ms"`
	ManifestWarnings any              `json:"manifest_warnings"`
	Entries          []inspectedEntry `json:"entries"`
	Manifest         any              `json:"manifest"`
}

type inspectedEntry struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func (a *app) packageInspectCommand() *cobra.Command {
	var path string
	c := &cobra.Command{
		Use:     "inspect --artifact A",
		Example: "  palyra skills package inspect --artifact acme.echo.palyra-skill",
		Short:   "Check an artifact's structure and signature without a trust store",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readSmallFile(path, artifact.MaxArtifactBytes)
			if err != nil {
				return err
			}
			ins, err := artifact.Inspect(data)
			if err != nil {
				return err
			}
			pub := ins.PublicKey
			r := inspectReport{
				Artifact: path, SkillID: ins.Manifest.SkillID, Version: ins.Manifest.Version, Publisher: ins.Manifest.Publisher,
				PayloadSHA256: ins.PayloadSHA256, KeyID: ins.Signature.KeyID, PublicKeyHex: hex.EncodeToString(pub),
				SignedAtUnixMS: ins.Signature.SignedAtUnixMS, ManifestWarnings: ins.Warnings, Manifest: ins.Manifest,
			}
			entries := output.NewTable(output.Column{Header: "path"}, output.Column{Header: "bytes"}, output.Column{Header: "sha256"})
			for _, name := range slices.Sorted(maps.Keys(ins.Entries)) {
				data := ins.Entries[name]
				sum := sha256.Sum256(data)
				e := inspectedEntry{Path: name, Bytes: len(data), SHA256: hex.EncodeToString(sum[:])}
				r.Entries = append(r.Entries, e)
				entries.Row(e.Path, e.Bytes, e.SHA256)
			}
			bl := output.NewBlock()
			bl.Field("Artifact", filepath.Base(path))
			bl.Field("Skill", r.SkillID)
			bl.Field("Version", r.Version)
			bl.Field("Publisher", r.Publisher)
			bl.Field("Key id", r.KeyID)
			bl.Field("Signed", time.UnixMilli(r.SignedAtUnixMS).UTC().Format(time.RFC3339))
			bl.Field("Payload sha256", r.PayloadSHA256)
			tools := output.NewTable(output.Column{Header: "tool"}, output.Column{Header: "description"})
			for _, tl := range ins.Manifest.Entrypoints.Tools {
				tools.Row(tl.ID, tl.Description)
			}
			bl.Section("Tools", tools.String(false))
			bl.Section("Entries", entries.String(false))
			text := bl.String()
			return a.emit(r, text)
		},
	}
	c.Flags().StringVar(&path, "artifact", "", ".palyra-skill file")
	requireFlags(c, "artifact")
	return c
}

func (a *app) errorCodesCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "error-codes",
		Example: "  palyra error-codes\n  palyra error-codes -o json",
		Short:   "List every stable error code palyra can report",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := errcode.All()
			t := output.NewTable(output.Column{Header: "code"}, output.Column{Header: "message"})
			for _, e := range all {
				t.Row(e.Code, e.Message)
			}
			return a.emit(map[string]any{"codes": all}, t.String(a.wide()))
		},
	}
}
