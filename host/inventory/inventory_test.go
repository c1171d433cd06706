package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func TestPutAndRead(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := openTest(t, WithClock(clk.Now))

	rec := record(" ACME.Echo ", "01.0.0")
	rec.AuditReport = json.RawMessage(`{"passed":true}`)
	rec.Grants = json.RawMessage(`{"http":["api.example.com"]}`)
	rec.MissingSecrets = []SecretRef{{Scope: "skill:acme.echo", Key: "token"}}
	install(t, db, rec)

	e, err := db.Skill(ctx, "acme.echo", "")
	if err != nil {
		t.Fatal(err)
	}
	if e.SkillID != "acme.echo" || e.Version != "1.0.0" {
		t.Errorf("key = %q %q, want acme.echo 1.0.0 (normalized)", e.SkillID, e.Version)
	}
	if !e.Current || e.InstallState() != InstalledCurrent {
		t.Errorf("first version not current: %+v", e.Record)
	}
	if !e.InstalledAt.Equal(clk.Now()) {
		t.Errorf("InstalledAt = %v, want %v", e.InstalledAt, clk.Now())
	}
	if string(e.AuditReport) != `{"passed":true}` || string(e.Grants) != `{"http":["api.example.com"]}` {
		t.Errorf("JSON columns = %s, %s", e.AuditReport, e.Grants)
	}
	if !slices.Equal(e.MissingSecrets, rec.MissingSecrets) {
		t.Errorf("MissingSecrets = %v", e.MissingSecrets)
	}
	if e.Status == nil || e.Status.Status != StatusActive || e.Status.Principal != "user:test" {
		t.Errorf("Status = %+v", e.Status)
	}
	if got := e.Eligibility(nil); !got.OK() {
		t.Errorf("Eligibility = %+v", got)
	}

	js, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"skill_id":"acme.echo"`, `"current":true`, `"status":{`, `"operator_principal":"user:test"`, `"missing_secrets":[{`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON of the entry lacks %s: %s", key, js)
		}
	}

	// The same version by its other spelling.
	if _, err := db.Skill(ctx, "acme.echo", "1.00.0"); err != nil {
		t.Errorf("Skill(1.00.0): %v", err)
	}
	for _, v := range []string{"", "2.0.0"} {
		_, err := db.Skill(ctx, "acme.other", v)
		if !errors.Is(err, ErrNotFound) || errcode.Of(err) != "skill_not_found" {
			t.Errorf("Skill(acme.other, %q) = %v, want ErrNotFound", v, err)
		}
	}
	_, err = db.Skill(ctx, "acme.echo", "1.0")
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Skill(bad version) = %v, want ErrInvalidArgument", err)
	}
}

func TestPutAlreadyInstalled(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.echo", "1.0.0"))

	err := db.Update(ctx, func(tx *Tx) error { return tx.PutSkill(record("acme.echo", "1.0.0"), PutOptions{}) })
	if !errors.Is(err, ErrAlreadyInstalled) || errcode.Of(err) != "already_installed" {
		t.Fatalf("second put = %v, want ErrAlreadyInstalled", err)
	}

	rec := record("acme.echo", "1.0.0")
	rec.TrustDecision = "tofu_pinned"
	if err := db.Update(ctx, func(tx *Tx) error { return tx.PutSkill(rec, PutOptions{Replace: true}) }); err != nil {
		t.Fatalf("replace: %v", err)
	}
	e, err := db.Skill(ctx, "acme.echo", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if e.TrustDecision != "tofu_pinned" || !e.Current || e.Status == nil {
		t.Errorf("after replace: trust %q, current %v, status %v", e.TrustDecision, e.Current, e.Status)
	}
}

func versionsOf(t *testing.T, db *DB, id string) (all []string, current string) {
	t.Helper()
	es, err := db.Skills(context.Background(), Filter{SkillID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		all = append(all, e.Version)
		if e.Current {
			if current != "" {
				t.Fatalf("two current versions: %s and %s", current, e.Version)
			}
			current = e.Version
		}
	}
	return all, current
}

func TestCurrentBookkeeping(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	put := func(version string, current bool) {
		t.Helper()
		rec := record("acme.echo", version)
		rec.Current = current
		install(t, db, rec)
	}
	step := func(name, wantCurrent string, wantAll ...string) {
		t.Helper()
		all, cur := versionsOf(t, db, "acme.echo")
		if cur != wantCurrent || !slices.Equal(all, wantAll) {
			t.Errorf("%s: versions %v current %q; want %v current %q", name, all, cur, wantAll, wantCurrent)
		}
	}

	put("1.9.0", false)
	step("first install is current", "1.9.0", "1.9.0")
	put("1.10.0", false)
	step("a later install without Current does not take over", "1.9.0", "1.9.0", "1.10.0")
	put("1.2.0", true)
	step("Current takes over", "1.2.0", "1.2.0", "1.9.0", "1.10.0")

	if err := db.Update(ctx, func(tx *Tx) error { return tx.SetCurrent("acme.echo", "1.9.0") }); err != nil {
		t.Fatal(err)
	}
	step("SetCurrent", "1.9.0", "1.2.0", "1.9.0", "1.10.0")
	err := db.Update(ctx, func(tx *Tx) error { return tx.SetCurrent("acme.echo", "3.0.0") })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("SetCurrent(missing) = %v, want ErrNotFound", err)
	}
	step("failed SetCurrent changed nothing", "1.9.0", "1.2.0", "1.9.0", "1.10.0")

	del := func(version string) []string {
		t.Helper()
		var removed []string
		err := db.Update(ctx, func(tx *Tx) (err error) {
			removed, err = tx.DeleteSkill("acme.echo", version)
			return err
		})
		if err != nil {
			t.Fatalf("DeleteSkill(%q): %v", version, err)
		}
		return removed
	}
	if got := del("1.9.0"); !slices.Equal(got, []string{"1.9.0"}) {
		t.Errorf("removed %v", got)
	}
	step("deleting current promotes the highest semver (1.10.0 > 1.9.0 > 1.2.0)", "1.10.0", "1.2.0", "1.10.0")
	del("1.2.0")
	step("deleting a superseded version keeps current", "1.10.0", "1.10.0")
	put("1.11.0", false)
	if got := del(""); !slices.Equal(got, []string{"1.10.0", "1.11.0"}) {
		t.Errorf("delete all removed %v", got)
	}
	step("delete all", "")

	err = db.Update(ctx, func(tx *Tx) error { _, err := tx.DeleteSkill("acme.echo", ""); return err })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteSkill(nothing) = %v, want ErrNotFound", err)
	}

	// The partial unique index backs the rule up.
	put("1.0.0", false)
	put("2.0.0", false)
	if _, err := db.sql.Exec(`UPDATE skills SET current = 1 WHERE skill_id = 'acme.echo'`); err == nil {
		t.Error("two current rows were accepted by the database")
	}
}

func TestDeleteKeepsStatus(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.echo", "1.0.0"))
	err := db.Update(ctx, func(tx *Tx) error {
		if err := tx.SetStatus(StatusChange{SkillID: "acme.echo", Status: StatusQuarantined, Reason: "bad", Principal: "user:op"}); err != nil {
			return err
		}
		_, err := tx.DeleteSkill("acme.echo", "1.0.0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Status(ctx, "acme.echo", "1.0.0")
	if err != nil || st.Status != StatusQuarantined {
		t.Errorf("status after delete = %+v, %v; want quarantined kept", st, err)
	}
	if _, err := db.Status(ctx, "acme.echo", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("Status(current) with nothing installed = %v, want ErrNotFound", err)
	}
}

func TestSetStatusUpsert(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := openTest(t, WithClock(clk.Now))
	install(t, db, record("acme.echo", "1.0.0"))
	created := clk.Now()

	clk.Advance(time.Minute)
	detected := clk.Now().Add(-time.Second)
	err := db.Update(ctx, func(tx *Tx) error {
		return tx.SetStatus(StatusChange{
			SkillID: "  ACME.ECHO ", Version: "1.0.0", Status: StatusQuarantined,
			Reason: "  console_audit: failed  ", Principal: "user:op", DetectedAt: detected,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Status(ctx, "acme.echo", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := StatusRecord{
		SkillID: "acme.echo", Version: "1.0.0", Status: StatusQuarantined, Reason: "console_audit: failed",
		DetectedAt: detected, Principal: "user:op", CreatedAt: created, UpdatedAt: clk.Now(),
	}
	if st != want {
		t.Errorf("status =\n %+v\nwant\n %+v", st, want)
	}

	clk.Advance(time.Minute)
	err = db.Update(ctx, func(tx *Tx) error {
		return tx.SetStatus(StatusChange{SkillID: "acme.echo", Status: StatusActive, Reason: " \t ", Principal: "user:op"})
	})
	if err != nil {
		t.Fatal(err)
	}
	st, _ = db.Status(ctx, "acme.echo", "")
	if st.Status != StatusActive || st.Reason != "" || !st.CreatedAt.Equal(created) || !st.UpdatedAt.Equal(clk.Now()) {
		t.Errorf("after second upsert: %+v", st)
	}
	if n := count(t, db, `SELECT count(*) FROM skill_status WHERE reason IS NULL`); n != 1 {
		t.Errorf("blank reason not stored as NULL")
	}
	if n := count(t, db, `SELECT count(*) FROM skill_status`); n != 1 {
		t.Errorf("%d status rows, want 1", n)
	}
}

func TestSetStatusErrors(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.echo", "1.0.0"))
	tests := []struct {
		name string
		ch   StatusChange
		want error
	}{
		{"unknown status", StatusChange{SkillID: "acme.echo", Status: "paused", Principal: "p"}, ErrInvalidStatus},
		{"empty status", StatusChange{SkillID: "acme.echo", Principal: "p"}, ErrInvalidStatus},
		{"no principal", StatusChange{SkillID: "acme.echo", Status: StatusActive}, ErrInvalidArgument},
		{"not installed", StatusChange{SkillID: "acme.other", Status: StatusActive, Principal: "p"}, ErrNotFound},
		{"version not installed", StatusChange{SkillID: "acme.echo", Version: "2.0.0", Status: StatusActive, Principal: "p"}, ErrNotFound},
		{"bad id", StatusChange{SkillID: "acme/echo", Status: StatusActive, Principal: "p"}, ErrInvalidArgument},
		{"bad kind", StatusChange{SkillID: "acme.echo", Status: StatusActive, Principal: "p", Kind: "installed"}, ErrInvalidArgument},
		{"bad details", StatusChange{SkillID: "acme.echo", Status: StatusActive, Principal: "p", Details: []byte("{")}, ErrInvalidArgument},
		{"long reason", StatusChange{SkillID: "acme.echo", Status: StatusActive, Principal: "p", Reason: strings.Repeat("x", MaxReasonBytes+1)}, ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.Update(ctx, func(tx *Tx) error { return tx.SetStatus(tt.ch) })
			if !errors.Is(err, tt.want) {
				t.Errorf("SetStatus = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), tt.want.Error()+": ") {
				t.Errorf("error %q does not start with what failed", err)
			}
		})
	}
	if n := count(t, db, `SELECT count(*) FROM skill_events`); n != 1 {
		t.Errorf("%d events after failed changes, want only the install's", n)
	}
}

func TestStatusCheckConstraint(t *testing.T) {
	db := openTest(t)
	_, err := db.sql.Exec(`INSERT INTO skill_status VALUES ('a', '1.0.0', 'paused', NULL, 0, 'p', 0, 0)`)
	if err == nil || !strings.Contains(err.Error(), "CHECK") {
		t.Errorf("bad status insert = %v, want a CHECK constraint failure", err)
	}
	_, err = db.sql.Exec(`INSERT INTO skill_events (at_unix_ms, kind, skill_id, status, operator_principal) VALUES (0, 'skill.x', 'a', 'paused', 'p')`)
	if err == nil {
		t.Error("bad event status accepted")
	}
	for _, s := range []Status{StatusActive, StatusQuarantined, StatusDisabled, StatusCrashlooping} {
		if _, err := db.sql.Exec(`INSERT INTO skill_status VALUES ('a', ?, ?, NULL, 0, 'p', 0, 0)`, "1.0."+fmt.Sprint(len(s)), string(s)); err != nil {
			t.Errorf("status %q refused: %v", s, err)
		}
	}
}

func TestEveryStatusChangeWritesOneEvent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.echo", "1.0.0"))
	changes := []struct {
		status Status
		kind   EventKind
	}{
		{StatusQuarantined, EventQuarantined},
		{StatusQuarantined, EventQuarantined}, // unchanged value, still a recorded decision
		{StatusActive, EventEnabled},
		{StatusDisabled, EventDisabled},
		{StatusCrashlooping, EventCrashlooping},
	}
	for i, c := range changes {
		before := count(t, db, `SELECT count(*) FROM skill_events`)
		err := db.Update(ctx, func(tx *Tx) error {
			return tx.SetStatus(StatusChange{SkillID: "acme.echo", Status: c.status, Reason: fmt.Sprint("r", i), Principal: "user:op"})
		})
		if err != nil {
			t.Fatal(err)
		}
		if after := count(t, db, `SELECT count(*) FROM skill_events`); after != before+1 {
			t.Errorf("change %d wrote %d events, want 1", i, after-before)
		}
	}

	hist, err := db.StatusHistory(ctx, "ACME.echo")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(changes)+1 {
		t.Fatalf("history has %d events, want %d", len(hist), len(changes)+1)
	}
	if hist[0].Kind != EventInstalled || hist[0].Status != StatusActive {
		t.Errorf("first = %+v, want the install", hist[0])
	}
	for i, c := range changes {
		ev := hist[i+1]
		if ev.Kind != c.kind || ev.Status != c.status || ev.Reason != fmt.Sprint("r", i) ||
			ev.Principal != "user:op" || ev.Version != "1.0.0" || ev.SkillID != "acme.echo" {
			t.Errorf("event %d = %+v", i, ev)
		}
	}
}

func TestEvents(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.a", "1.0.0"))
	install(t, db, record("acme.b", "1.0.0"))
	var verified int64
	err := db.Update(ctx, func(tx *Tx) (err error) {
		verified, err = tx.AppendEvent(Event{
			Kind: EventVerified, SkillID: "acme.a", Version: "1.0.0", Principal: "user:op",
			Details: json.RawMessage(`{"trust_decision":"allowlisted"}`),
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	all, err := db.Events(ctx, EventFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("Events = %d, %v; want 3", len(all), err)
	}
	if all[2].ID != verified || string(all[2].Details) != `{"trust_decision":"allowlisted"}` || all[2].Status != "" {
		t.Errorf("appended event = %+v", all[2])
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Errorf("events not in id order: %d after %d", all[i].ID, all[i-1].ID)
		}
	}
	page, _ := db.Events(ctx, EventFilter{AfterID: all[0].ID, Limit: 1})
	if len(page) != 1 || page[0].ID != all[1].ID {
		t.Errorf("page after %d = %+v", all[0].ID, page)
	}
	onlyA, _ := db.Events(ctx, EventFilter{SkillID: "acme.a"})
	if len(onlyA) != 2 {
		t.Errorf("acme.a has %d events, want 2", len(onlyA))
	}
	if _, err := db.Events(ctx, EventFilter{Limit: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative limit = %v", err)
	}

	bad := []Event{
		{Kind: "skill.x", SkillID: "acme.a", Principal: "p", Status: StatusActive},
		{Kind: "removed", SkillID: "acme.a", Principal: "p"},
		{Kind: "skill.x", SkillID: "", Principal: "p"},
		{Kind: "skill.x", SkillID: "acme.a"},
		{Kind: "skill.x", SkillID: "acme.a", Version: "1", Principal: "p"},
	}
	for _, ev := range bad {
		err := db.Update(ctx, func(tx *Tx) error { _, err := tx.AppendEvent(ev); return err })
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AppendEvent(%+v) = %v, want ErrInvalidArgument", ev, err)
		}
	}
}

func TestSkillsFilter(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	install(t, db, record("acme.b", "1.0.0"))
	install(t, db, record("acme.a", "1.10.0"))
	install(t, db, record("acme.a", "1.9.0"))
	other := record("zeta.c", "0.1.0")
	other.Publisher = "zeta"
	install(t, db, other)
	err := db.Update(ctx, func(tx *Tx) error {
		return tx.SetStatus(StatusChange{SkillID: "acme.b", Status: StatusQuarantined, Principal: "p"})
	})
	if err != nil {
		t.Fatal(err)
	}

	key := func(es []Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.SkillID+"@"+e.Version)
		}
		return out
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all, sorted by id then semver", Filter{}, []string{"acme.a@1.9.0", "acme.a@1.10.0", "acme.b@1.0.0", "zeta.c@0.1.0"}},
		{"skill", Filter{SkillID: "ACME.A"}, []string{"acme.a@1.9.0", "acme.a@1.10.0"}},
		{"current only", Filter{CurrentOnly: true}, []string{"acme.a@1.10.0", "acme.b@1.0.0", "zeta.c@0.1.0"}},
		{"publisher", Filter{Publisher: "zeta"}, []string{"zeta.c@0.1.0"}},
		{"status", Filter{Status: StatusQuarantined}, []string{"acme.b@1.0.0"}},
		{"nothing", Filter{SkillID: "none"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := db.Skills(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := key(es); !slices.Equal(got, tt.want) {
				t.Errorf("Skills(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
	if _, err := db.Skills(ctx, Filter{Status: "paused"}); !errors.Is(err, ErrInvalidStatus) {
		t.Errorf("bad status filter = %v", err)
	}
}

// TestUpdateIsAtomic: an error or a panic inside Update leaves no skill row,
// no status row and no event.
func TestUpdateIsAtomic(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	installThen := func(last func(tx *Tx) error) func(tx *Tx) error {
		return func(tx *Tx) error {
			rec := record("acme.echo", "1.0.0")
			if err := tx.PutSkill(rec, PutOptions{}); err != nil {
				return err
			}
			if err := tx.SetStatus(StatusChange{SkillID: rec.SkillID, Version: rec.Version, Status: StatusActive, Principal: "p"}); err != nil {
				return err
			}
			if _, err := tx.AppendEvent(Event{Kind: EventAudited, SkillID: rec.SkillID, Principal: "p"}); err != nil {
				return err
			}
			if _, err := tx.Skill("acme.echo", ""); err != nil {
				return fmt.Errorf("tx does not see its own write: %w", err)
			}
			return last(tx)
		}
	}
	tests := []struct {
		name  string
		fn    func(tx *Tx) error
		panic bool
	}{
		{"error", installThen(func(*Tx) error { return errBoom }), false},
		{"failing step", installThen(func(tx *Tx) error { return tx.PutSkill(record("acme.echo", "1.0.0"), PutOptions{}) }), false},
		{"panic", installThen(func(*Tx) error { panic(errBoom) }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			var err error
			func() {
				defer func() {
					p := recover()
					if (p != nil) != tt.panic {
						t.Errorf("recovered %v, want panic=%v", p, tt.panic)
					}
				}()
				err = db.Update(ctx, tt.fn)
			}()
			if !tt.panic && err == nil {
				t.Fatal("Update succeeded")
			}
			if tt.name == "error" && !errors.Is(err, errBoom) {
				t.Errorf("Update = %v, want fn's error unchanged", err)
			}
			for _, table := range []string{"skills", "skill_status", "skill_events"} {
				if n := count(t, db, `SELECT count(*) FROM `+table); n != 0 {
					t.Errorf("%s has %d rows after a failed Update", table, n)
				}
			}
			// The DB is still usable: the write lock was released.
			install(t, db, record("acme.echo", "1.0.0"))
		})
	}
}

func TestTxDeadAfterUpdate(t *testing.T) {
	db := openTest(t)
	var leaked *Tx
	if err := db.Update(context.Background(), func(tx *Tx) error { leaked = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := leaked.PutSkill(record("acme.echo", "1.0.0"), PutOptions{}); err == nil {
		t.Error("PutSkill on a finished Tx succeeded")
	}
}

func TestUpdateContext(t *testing.T) {
	db := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := db.Update(ctx, func(tx *Tx) error { return tx.PutSkill(record("acme.echo", "1.0.0"), PutOptions{}) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update(cancelled) = %v, want context.Canceled", err)
	}
}

func TestPutSkillValidation(t *testing.T) {
	db := openTest(t)
	tests := []struct {
		name string
		edit func(*Record)
	}{
		{"empty id", func(r *Record) { r.SkillID = " " }},
		{"bad id", func(r *Record) { r.SkillID = "acme echo" }},
		{"long id", func(r *Record) { r.SkillID = strings.Repeat("a", MaxIdentifierBytes+1) }},
		{"bad version", func(r *Record) { r.Version = "1.0.0-rc1" }},
		{"no publisher", func(r *Record) { r.Publisher = "" }},
		{"bad artifact hash", func(r *Record) { r.ArtifactSHA256 = "abc" }},
		{"bad payload hash", func(r *Record) { r.PayloadSHA256 = strings.Repeat("g", 64) }},
		{"no key id", func(r *Record) { r.SignatureKeyID = "" }},
		{"no trust decision", func(r *Record) { r.TrustDecision = "" }},
		{"no source kind", func(r *Record) { r.SourceKind = "" }},
		{"absolute install dir", func(r *Record) { r.InstallDir = "/var/lib/x" }},
		{"escaping install dir", func(r *Record) { r.InstallDir = "skills/../../x" }},
		{"no manifest", func(r *Record) { r.Manifest = nil }},
		{"manifest not JSON", func(r *Record) { r.Manifest = []byte("skill_id = 1") }},
		{"manifest not an object", func(r *Record) { r.Manifest = []byte(`[1]`) }},
		{"bad audit JSON", func(r *Record) { r.AuditReport = []byte("{") }},
		{"bad grants JSON", func(r *Record) { r.Grants = []byte("nope") }},
		{"negative tools", func(r *Record) { r.ToolCount = -1 }},
		{"empty secret", func(r *Record) { r.MissingSecrets = []SecretRef{{Scope: "s"}} }},
		{"control char", func(r *Record) { r.Publisher = "ac\nme" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := record("acme.echo", "1.0.0")
			tt.edit(&rec)
			err := db.Update(context.Background(), func(tx *Tx) error { return tx.PutSkill(rec, PutOptions{}) })
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("PutSkill = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

func TestEligibility(t *testing.T) {
	errCompat, errOther := manifest.ErrUnsupportedProtocolMajor, manifest.ErrUnsupportedRuntimeVersion
	st := func(s Status) *StatusRecord { return &StatusRecord{Status: s} }
	tests := []struct {
		name    string
		status  *StatusRecord
		compat  error
		want    EligibilityStatus
		reasons []string
	}{
		{"active", st(StatusActive), nil, Eligible, []string{}},
		{"no row", nil, nil, Blocked, []string{"status_missing"}},
		{"quarantined", st(StatusQuarantined), nil, Blocked, []string{"status_quarantined"}},
		{"disabled", st(StatusDisabled), nil, Blocked, []string{"status_disabled"}},
		{"crashlooping", st(StatusCrashlooping), nil, Blocked, []string{"status_crashlooping"}},
		{"incompatible", st(StatusActive), fmt.Errorf("%w: needs 2", errCompat), Blocked, []string{"unsupported_protocol_major"}},
		{"joined", st(StatusDisabled), errors.Join(errCompat, errOther), Blocked,
			[]string{"unsupported_protocol_major", "unsupported_runtime_version", "status_disabled"}},
		{"cause dropped", st(StatusActive), fmt.Errorf("%w: %w", errCompat, errors.New("x")), Blocked, []string{"unsupported_protocol_major"}},
		{"plain error", st(StatusActive), errors.New("x"), Blocked, []string{errcode.Internal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckEligibility(tt.status, tt.compat)
			if got.Status != tt.want || !slices.Equal(got.Reasons, tt.reasons) || got.OK() != (tt.want == Eligible) {
				t.Errorf("CheckEligibility = %+v, want %s %v", got, tt.want, tt.reasons)
			}
		})
	}
}

// TestConcurrentGoroutines: 8 goroutines × 50 installs of different skills
// through one DB all land.
func TestConcurrentGoroutines(t *testing.T) {
	const workers, each = 8, 50
	ctx := context.Background()
	db := openTest(t)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := installSkill(ctx, db, fmt.Sprintf("g%d.s%d", w, i)); err != nil {
					errs <- err
					return
				}
				// Readers run alongside the writers.
				if _, err := db.Skill(ctx, fmt.Sprintf("g%d.s%d", w, i), ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for table, per := range map[string]int{"skills": 1, "skill_status": 1, "skill_events": 2} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n != workers*each*per {
			t.Errorf("%s has %d rows, want %d", table, n, workers*each*per)
		}
	}
}

// installSkill is an install-shaped transaction: put + status (which
// writes its event) + one more event, as an installer recording its audit.
func installSkill(ctx context.Context, db *DB, id string) error {
	return db.Update(ctx, func(tx *Tx) error {
		rec := record(id, "1.0.0")
		if err := tx.PutSkill(rec, PutOptions{}); err != nil {
			return err
		}
		if err := tx.SetStatus(StatusChange{SkillID: id, Version: "1.0.0", Status: StatusActive, Principal: "user:test"}); err != nil {
			return err
		}
		_, err := tx.AppendEvent(Event{Kind: EventAudited, SkillID: id, Version: "1.0.0", Principal: "user:test"})
		return err
	})
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "inventory.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := db.Update(ctx, func(*Tx) error { return nil }); err == nil || !strings.HasPrefix(err.Error(), "inventory: ") {
		t.Errorf("Update after Close = %v", err)
	}
	if _, err := db.Skills(ctx, Filter{}); err == nil || !strings.HasPrefix(err.Error(), "inventory: ") {
		t.Errorf("Skills after Close = %v", err)
	}
}
