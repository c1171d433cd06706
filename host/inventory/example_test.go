package inventory_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/statedir"
)

// An installer commits the inventory row, the status row and the event in
// one transaction; the execution gate then reads the current version
// together with its own status.
func Example() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)

	db, err := inventory.Open(ctx, statedir.At(state).Inventory())
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	rec := inventory.Record{
		SkillID:        "acme.echo_http",
		Version:        "1.0.0",
		Publisher:      "acme",
		ArtifactSHA256: "0f343b0931126a20f133d67c2b018a3b5bb12a5cbaff9b9a5b1e9c3fc2c7b7a1",
		PayloadSHA256:  "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
		SignatureKeyID: "ed25519:8a88e3dd",
		TrustDecision:  "allowlisted",
		SourceKind:     inventory.SourceLocalArtifact,
		InstallDir:     filepath.ToSlash(filepath.Join("skills", "acme.echo_http", "1.0.0")),
		Manifest:       []byte(`{"skill_id":"acme.echo_http","version":"1.0.0"}`),
		ToolCount:      1,
	}
	err = db.Update(ctx, func(tx *inventory.Tx) error {
		if err := tx.PutSkill(rec, inventory.PutOptions{}); err != nil {
			return err
		}
		return tx.SetStatus(inventory.StatusChange{
			SkillID: rec.SkillID, Version: rec.Version, Status: inventory.StatusActive,
			Principal: "user:local", Kind: inventory.EventInstalled,
		})
	})
	if err != nil {
		log.Fatal(err)
	}

	// An operator quarantines the current version.
	err = db.Update(ctx, func(tx *inventory.Tx) error {
		return tx.SetStatus(inventory.StatusChange{
			SkillID: "acme.echo_http", Status: inventory.StatusQuarantined,
			Reason: "suspicious egress", Principal: "user:local",
		})
	})
	if err != nil {
		log.Fatal(err)
	}

	e, err := db.Skill(ctx, "acme.echo_http", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.SkillID, e.Version, e.InstallState(), e.Status.Status, e.Status.Reason)
	fmt.Printf("%+v\n", e.Eligibility(nil))

	hist, err := db.StatusHistory(ctx, "acme.echo_http")
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range hist {
		fmt.Println(ev.Kind, ev.Status, ev.Principal)
	}
	// Output:
	// acme.echo_http 1.0.0 installed_current quarantined suspicious egress
	// {Status:blocked Reasons:[status_quarantined]}
	// skill.installed active user:local
	// skill.quarantined quarantined user:local
}
