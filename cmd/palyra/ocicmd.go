package main

import (
	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/oci"
)

// pushReport is the JSON of skills push.
type pushReport struct {
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Tag       string `json:"tag"`
	SkillID   string `json:"skill_id"`
	Version   string `json:"version"`
}

// pushCommand is skills push: a publisher-side tool (it operates no host).
func (a *app) pushCommand() *cobra.Command {
	var plainHTTP bool
	c := &cobra.Command{
		Use:     "push ARTIFACT oci://REGISTRY/REPO[:TAG] [--plain-http]",
		Example: "  palyra skills push acme.echo-1.0.0.palyra-skill oci://ghcr.io/acme/echo:1.0.0",
		Short:   "Push a signed .palyra-skill artifact to an OCI registry",
		Long: "push inspects the artifact (a file that is not a valid signed artifact is refused) and pushes it as one OCI manifest " +
			"(artifactType " + oci.ArtifactType + ") whose single layer is the file (" + oci.LayerMediaType + "), annotated with the skill id, version, publisher and payload hash. " +
			"The tag defaults to the skill's version. It prints the reference with the manifest digest, which installs exactly these bytes.\n\n" +
			"Credentials come from the docker config file ($DOCKER_CONFIG/config.json, else ~/.docker/config.json); --plain-http speaks HTTP, for a registry on loopback only.",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readSmallFile(args[0], artifact.MaxArtifactBytes)
			if err != nil {
				return err
			}
			cfg := cliconfig.Sources()
			p, err := oci.Push(cmd.Context(), oci.Config{DockerConfig: cfg.DockerConfig, PlainHTTP: plainHTTP}, args[1], data)
			if err != nil {
				return err
			}
			rep := pushReport{Reference: p.Reference, Digest: p.Digest, Tag: p.Tag, SkillID: p.SkillID, Version: p.Version}
			return a.emit(rep, "skills.push "+output.KV("reference", p.Reference, "digest", p.Digest, "tag", p.Tag, "skill_id", p.SkillID, "version", p.Version))
		},
	}
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "speak HTTP to the registry (loopback registries only)")
	return c
}
