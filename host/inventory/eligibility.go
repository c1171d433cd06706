package inventory

import (
	"slices"

	"github.com/palyra-go/palyra/host/errcode"
)

// EligibilityStatus says whether an installed version may run.
type EligibilityStatus string

// The eligibility statuses. Palyra's CLI also has "unknown" for a journal it
// cannot read; here the status lives in the same database as the
// inventory, so a missing status row blocks instead (the daemon's rule too).
const (
	Eligible EligibilityStatus = "eligible"
	Blocked  EligibilityStatus = "blocked"
)

// Eligibility is the verdict of CheckEligibility with its reasons.
type Eligibility struct {
	Status EligibilityStatus `json:"status"`
	// Reasons are stable snake_case codes, empty when eligible: the
	// errcode codes of the compatibility errors (such as
	// unsupported_protocol_major), then "status_missing" or
	// "status_<status>".
	Reasons []string `json:"reasons"`
}

// OK reports whether the verdict is Eligible.
func (e Eligibility) OK() bool { return e.Status == Eligible }

// CheckEligibility decides whether a version may run from its status row
// (nil when it has none) and the result of the manifest's compatibility
// check against this build (nil when compatible; errors.Join of several is
// fine). A version is eligible only with a row whose status is active and
// no compatibility error.
func CheckEligibility(status *StatusRecord, compatErr error) Eligibility {
	reasons := compatCodes(compatErr)
	switch {
	case status == nil:
		reasons = append(reasons, "status_missing")
	case status.Status != StatusActive:
		reasons = append(reasons, "status_"+string(status.Status))
	}
	if len(reasons) > 0 {
		return Eligibility{Status: Blocked, Reasons: reasons}
	}
	return Eligibility{Status: Eligible, Reasons: []string{}}
}

// Eligibility is CheckEligibility of the entry's own status row.
func (e Entry) Eligibility(compatErr error) Eligibility {
	return CheckEligibility(e.Status, compatErr)
}

// compatCodes returns the distinct codes of the errors in err's tree (an
// errors.Join is split into its parts); "internal" is kept only when no
// part has a code of its own.
func compatCodes(err error) []string {
	var codes []string
	for _, e := range flatten(err) {
		if c := errcode.Of(e); !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	if len(codes) > 1 {
		codes = slices.DeleteFunc(codes, func(c string) bool { return c == errcode.Internal })
	}
	return codes
}

// flatten splits an error with several causes (errors.Join, or fmt.Errorf
// with several %w) into its parts.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
