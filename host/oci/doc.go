// Package oci pushes skill artifacts to OCI registries and pulls them back,
// with oras-go v2.
//
// One skill version is one OCI image manifest (spec 1.1, with
// artifactType) whose single layer is the .palyra-skill file:
//
//	artifactType  application/vnd.palyra.skill.v1
//	config        the empty descriptor (application/vnd.oci.empty.v1+json, "{}")
//	layer         application/vnd.palyra.skill.artifact.v1+zip (the artifact's bytes)
//	annotations   dev.palyra.skill.id, dev.palyra.skill.version,
//	              dev.palyra.skill.publisher, dev.palyra.skill.payload_sha256,
//	              org.opencontainers.image.title (the file name),
//	              org.opencontainers.image.created (the signing time, RFC 3339)
//
// The manifest depends on the file only, so pushing the same file again
// (under any tag) gives the same digest. A push tags the manifest with the skill's version unless the reference
// names a tag. The annotations are informative: what is trusted is the
// artifact's own signature, which the installer verifies; a tag moved to
// another artifact is just another artifact to verify.
//
// References are oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]. A pull by
// digest checks the manifest's bytes against the digest itself, and the
// layer's bytes against the manifest's descriptor (oci_digest_mismatch).
// Limits: manifest ≤ 4 MiB, layer ≤ artifact.MaxArtifactBytes, exactly one
// layer of the skill media type.
//
// Credentials come from a docker config file (Config.DockerConfig; the
// command resolves $DOCKER_CONFIG or ~/.docker); none means anonymous.
// Plain HTTP is used only when asked and only for a loopback registry
// (127.0.0.0/8, ::1, localhost); otherwise it is refused.
//
// Error codes:
//
//	oci_invalid_reference    ErrInvalidReference: not oci://REGISTRY/REPO[:TAG][@sha256:HEX]
//	oci_plain_http_refused   ErrPlainHTTPRefused: plain HTTP asked for a non-loopback registry
//	oci_digest_mismatch      ErrDigestMismatch: manifest or layer bytes do not hash to their digest
//	oci_manifest_too_large   ErrManifestTooLarge: manifest above MaxManifestBytes
//	oci_layer_too_large      ErrLayerTooLarge: layer above artifact.MaxArtifactBytes
//	oci_not_a_skill          ErrNotASkill: not one layer of the skill media type
//	oci_not_found            ErrNotFound: no such repository, tag or digest
//	oci_unauthorized         ErrUnauthorized: the registry refused the credentials (or their absence)
//	oci_registry_error       ErrRegistry: any other registry failure
package oci
