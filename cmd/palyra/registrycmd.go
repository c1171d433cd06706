package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/host/source"
)

// registryBuildReport is the JSON of skills registry build.
type registryBuildReport struct {
	IndexPath  string `json:"index_path"`
	Entries    int    `json:"entries"`
	Publisher  string `json:"publisher"`
	KeyID      string `json:"key_id"`
	PayloadSHA string `json:"payload_sha256"`
}

func (a *app) registryCommand() *cobra.Command {
	return group("registry", "Build signed registry indexes", a.registryBuildCommand())
}

func (a *app) registryBuildCommand() *cobra.Command {
	var (
		dir, publisher string
		key            = keySource{what: "signing key", fileFlag: "signing-key", stdinFlag: "signing-key-stdin", vaultFlag: "signing-key-vault-ref"}
	)
	c := &cobra.Command{
		Use:     "build --dir D (--signing-key FILE | --signing-key-stdin | --signing-key-vault-ref SCOPE/KEY) [--publisher P]",
		Example: "  palyra skills registry build --dir ./registry --signing-key-vault-ref signing/acme --publisher acme",
		Short:   "Write a signed index.json over a directory of .palyra-skill files",
		Long: "build scans --dir recursively for *.palyra-skill files (symbolic links are skipped), inspects each (any that fails aborts the build, naming it), " +
			"and writes <dir>/index.json: Palyra's signed registry index, its entries sorted by skill id and version, each artifact named by its path relative to the directory.\n\n" +
			"The index is signed with the key (32 raw bytes, or hex or standard base64 of the Ed25519 seed; from --signing-key FILE, --signing-key-stdin, or --signing-key-vault-ref SCOPE/KEY, the state directory's encrypted vault, see palyra keys generate --vault-ref) for --publisher, by default the one publisher of the artifacts. " +
			"Serve the directory over HTTPS (install with --registry-url URL/index.json) or use it as is (--registry-dir). " +
			"The signing time is now, or $SOURCE_DATE_EPOCH when set.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := key.load(cmd.Context(), a)
			if err != nil {
				return err
			}
			now, err := signingTime()
			if err != nil {
				return err
			}
			built, err := registry.Build(dir, k, publisher, now)
			if err != nil {
				return err
			}
			path, err := registry.WriteIndex(dir, built.Bytes)
			if err != nil {
				return fmt.Errorf("%w: %v", errIO, err)
			}
			s := built.Document.Signature
			r := registryBuildReport{IndexPath: path, Entries: len(built.Document.Index.Entries), Publisher: s.Publisher, KeyID: s.KeyID, PayloadSHA: s.PayloadSHA256}
			return a.emit(r, "skills.registry.build "+output.KV("index", r.IndexPath, "entries", r.Entries, "publisher", r.Publisher, "key_id", r.KeyID, "payload_sha256", r.PayloadSHA))
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "registry directory to scan and write index.json into")
	c.Flags().StringVar(&publisher, "publisher", "", "publisher named in the index signature (default: the artifacts' one publisher)")
	key.register(c)
	requireFlags(c, "dir")
	return c
}

// installSourceFlags are skills install's registry options.
type installSourceFlags struct {
	registryURL, registryDir, skill, version, caCert string
}

func (s *installSourceFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&s.registryURL, "registry-url", "", "https URL of a signed registry index (index.json) to install --skill from")
	f.StringVar(&s.registryDir, "registry-dir", "", "local registry directory (holding index.json) to install --skill from")
	f.StringVar(&s.skill, "skill", "", "skill id to install from the registry")
	f.StringVar(&s.version, "version", "", "version to install from the registry (default: the highest)")
	f.StringVar(&s.caCert, "registry-ca-cert", "", "PEM CA bundle trusted for --registry-url besides the system roots")
}

// set reports whether a registry option was given.
func (s *installSourceFlags) set() bool {
	return s.registryURL != "" || s.registryDir != "" || s.skill != "" || s.version != "" || s.caCert != ""
}

// ref checks the options and returns the Ref they name.
func (s *installSourceFlags) ref(artifactPath string) (*host.SourceRef, error) {
	switch {
	case artifactPath != "" && s.set():
		return nil, fmt.Errorf("%w: --artifact installs a file; --registry-url, --registry-dir, --skill, --version and --registry-ca-cert install from a registry: give one or the other", errUsage)
	case (s.registryURL != "") == (s.registryDir != ""):
		return nil, fmt.Errorf("%w: give --artifact, or one of --registry-url and --registry-dir with --skill", errUsage)
	case s.skill == "":
		return nil, fmt.Errorf("%w: --skill names the skill to install from the registry", errUsage)
	case s.caCert != "" && s.registryURL == "":
		return nil, fmt.Errorf("%w: --registry-ca-cert applies to --registry-url", errUsage)
	}
	ref := &host.SourceRef{RegistryURL: s.registryURL, SkillID: s.skill, Version: s.version}
	if s.registryDir != "" {
		abs, err := filepath.Abs(s.registryDir)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errIO, err)
		}
		ref.RegistryDir = abs
	}
	if s.caCert != "" {
		pem, err := readSmallFile(s.caCert, maxSmallFileBytes)
		if err != nil {
			return nil, err
		}
		ref.RegistryCACert = string(pem)
	}
	return ref, nil
}

// fetchForDaemon fetches a --registry-dir install here, since a daemon
// cannot read the client's files: the index key is judged by the state
// directory's trust store (pinned with --allow-tofu), and the bytes go to
// the daemon with the source they came from.
func (a *app) fetchForDaemon(ctx context.Context, cmd *cobra.Command, sv *service, req *host.InstallRequest) error {
	if _, remote := sv.Service.(*client.Client); !remote || req.From == nil || req.From.RegistryDir == "" {
		return nil
	}
	tf, _, err := a.openTrust(cmd, &trustFlags{})
	if err != nil {
		return err
	}
	f := source.New(source.Config{Trust: func(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
		d, err := tf.Decide(ctx, publisher, key, allowTOFU)
		return string(d), err
	}})
	got, err := f.Fetch(ctx, *req.From, req.AllowTOFU)
	if err != nil {
		return err
	}
	req.Artifact, req.Source, req.From = got.Artifact, got.Source, nil
	return nil
}
