package daemon

import (
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
)

// ErrOverrideRequired is Palyra's admin enable without override: true,
// the API's own refusal (install.ErrOverrideRequired's code).
var ErrOverrideRequired = install.ErrOverrideRequired

// statusByCode maps error codes to HTTP statuses and gRPC codes. A code not
// listed is a refusal of a well-formed request (422 / FailedPrecondition);
// "internal" is 500 / Internal.
var statusByCode = map[string]struct {
	http int
	grpc codes.Code
}{
	"internal":                   {http.StatusInternalServerError, codes.Internal},
	"unauthorized":               {http.StatusUnauthorized, codes.Unauthenticated},
	"admin_token_file_invalid":   {http.StatusUnauthorized, codes.Unauthenticated},
	"bad_request":                {http.StatusBadRequest, codes.InvalidArgument},
	"usage":                      {http.StatusBadRequest, codes.InvalidArgument},
	"invalid_input":              {http.StatusBadRequest, codes.InvalidArgument},
	"invalid_identifier":         {http.StatusBadRequest, codes.InvalidArgument},
	"override_required":          {http.StatusBadRequest, codes.InvalidArgument},
	"unknown_hook_event":         {http.StatusBadRequest, codes.InvalidArgument},
	"a2ui_invalid_submit":        {http.StatusBadRequest, codes.InvalidArgument},
	"request_too_large":          {http.StatusRequestEntityTooLarge, codes.ResourceExhausted},
	"route_not_found":            {http.StatusNotFound, codes.Unimplemented},
	"method_not_allowed":         {http.StatusMethodNotAllowed, codes.Unimplemented},
	"skill_not_found":            {http.StatusNotFound, codes.NotFound},
	"unknown_tool":               {http.StatusNotFound, codes.NotFound},
	"hook_not_found":             {http.StatusNotFound, codes.NotFound},
	"a2ui_document_not_found":    {http.StatusNotFound, codes.NotFound},
	"already_installed":          {http.StatusConflict, codes.AlreadyExists},
	"hook_exists":                {http.StatusConflict, codes.AlreadyExists},
	"install_locked":             {http.StatusConflict, codes.Aborted},
	"install_invalid_argument":   {http.StatusBadRequest, codes.InvalidArgument},
	"inventory_invalid_argument": {http.StatusBadRequest, codes.InvalidArgument},
	"invalid_hook_binding":       {http.StatusBadRequest, codes.InvalidArgument},
	"invalid_source":             {http.StatusBadRequest, codes.InvalidArgument},
	"not_published":              {http.StatusNotFound, codes.NotFound},
	"no_source":                  {http.StatusConflict, codes.FailedPrecondition},
	"registry_identity_mismatch": {http.StatusUnprocessableEntity, codes.FailedPrecondition},
	"capability_escalation":      {http.StatusUnprocessableEntity, codes.FailedPrecondition},
	"invalid_desired_state":      {http.StatusBadRequest, codes.InvalidArgument},
	"hook_timeout":               {http.StatusGatewayTimeout, codes.DeadlineExceeded},
	"skill_locked":               {http.StatusConflict, codes.Aborted},
	"trust_store_tampered":       {http.StatusConflict, codes.FailedPrecondition},
	"skill_referenced_by_hook":   {http.StatusPreconditionFailed, codes.FailedPrecondition},
	// Run-phase hooks: a block is a refusal (403); a hook that asked for
	// approval leaves the call not run (409, until approvals take it); a
	// fail_run is the run's failure, like a tool error (422); a fail-closed
	// hook that failed is a dependency that failed (424).
	"blocked_by_hook":            {http.StatusForbidden, codes.PermissionDenied},
	"approval_requested_by_hook": {http.StatusConflict, codes.FailedPrecondition},
	"run_failed_by_hook":         {http.StatusUnprocessableEntity, codes.Aborted},
	"run_hook_failed":            {http.StatusFailedDependency, codes.FailedPrecondition},
	"skill_quarantined":          {http.StatusForbidden, codes.FailedPrecondition},
	"review_pending":             {http.StatusConflict, codes.FailedPrecondition},
	"config_missing":             {http.StatusConflict, codes.FailedPrecondition},
	"config_invalid":             {http.StatusBadRequest, codes.InvalidArgument},
	"review_not_pending":         {http.StatusConflict, codes.FailedPrecondition},
	"approval_denied":            {http.StatusForbidden, codes.PermissionDenied},
	"approval_expired":           {http.StatusGone, codes.FailedPrecondition},
	"approval_already_decided":   {http.StatusConflict, codes.FailedPrecondition},
	"approval_used":              {http.StatusConflict, codes.FailedPrecondition},
	"approval_input_mismatch":    {http.StatusConflict, codes.FailedPrecondition},
	"approval_mismatch":          {http.StatusConflict, codes.FailedPrecondition},
	"approval_pending":           {http.StatusConflict, codes.FailedPrecondition}, // a call answers 202 with the approval (writePending)
	"approvals_full":             {http.StatusTooManyRequests, codes.ResourceExhausted},
	"inline_needs_approval":      {http.StatusForbidden, codes.PermissionDenied},
	"skill_disabled":             {http.StatusForbidden, codes.FailedPrecondition},
	"skill_status_missing":       {http.StatusForbidden, codes.FailedPrecondition},
	"crashlooping":               {http.StatusServiceUnavailable, codes.Unavailable},
	"capability_denied":          {http.StatusForbidden, codes.PermissionDenied},
	"inline_not_allowed":         {http.StatusForbidden, codes.PermissionDenied},
	"deployment_refused":         {http.StatusForbidden, codes.PermissionDenied},
	"overloaded":                 {http.StatusTooManyRequests, codes.ResourceExhausted},
	"host_closed":                {http.StatusServiceUnavailable, codes.Unavailable},
	"timeout":                    {http.StatusGatewayTimeout, codes.DeadlineExceeded},
	"canceled":                   {499, codes.Canceled},
	"sidecar_crashed":            {http.StatusBadGateway, codes.Unavailable},
	"invalid_output":             {http.StatusBadGateway, codes.Internal},
	"sidecar_bad_reply":          {http.StatusBadGateway, codes.Internal},
	"output_too_large":           {http.StatusBadGateway, codes.ResourceExhausted},
	"a2ui_invalid":               {http.StatusBadGateway, codes.Internal},
	"a2ui_limit_exceeded":        {http.StatusBadGateway, codes.ResourceExhausted},
	"a2ui_invalid_patch":         {http.StatusBadGateway, codes.Internal},
	"a2ui_patch_conflict":        {http.StatusBadGateway, codes.Internal},
	"a2ui_surface_mismatch":      {http.StatusBadGateway, codes.Internal},
	"a2ui_document_changed":      {http.StatusConflict, codes.Aborted},
	"tool_error":                 {http.StatusUnprocessableEntity, codes.Aborted},
	"fuel_exhausted":             {http.StatusUnprocessableEntity, codes.ResourceExhausted},
	"trap":                       {http.StatusUnprocessableEntity, codes.Aborted},
	"registry_insecure_url":      {http.StatusBadRequest, codes.InvalidArgument},
	"registry_fetch_failed":      {http.StatusBadGateway, codes.Unavailable},
	// OCI registries (host/oci). A registry refusing its credentials is the
	// registry's answer, not the API's: 502, never 401.
	"oci_invalid_reference":  {http.StatusBadRequest, codes.InvalidArgument},
	"oci_plain_http_refused": {http.StatusBadRequest, codes.InvalidArgument},
	"oci_digest_mismatch":    {http.StatusBadGateway, codes.DataLoss},
	"oci_manifest_too_large": {http.StatusBadGateway, codes.ResourceExhausted},
	"oci_layer_too_large":    {http.StatusBadGateway, codes.ResourceExhausted},
	"oci_not_a_skill":        {http.StatusBadGateway, codes.FailedPrecondition},
	"oci_not_found":          {http.StatusNotFound, codes.NotFound},
	"oci_unauthorized":       {http.StatusBadGateway, codes.PermissionDenied},
	"oci_registry_error":     {http.StatusBadGateway, codes.Unavailable},
}

// HTTPStatus is the HTTP status the API answers an error code with.
func HTTPStatus(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s.http
	}
	if strings.HasSuffix(code, "_not_found") {
		return http.StatusNotFound
	}
	return http.StatusUnprocessableEntity
}

// GRPCCode is the gRPC status code the API answers an error code with.
func GRPCCode(code string) codes.Code {
	if s, ok := statusByCode[code]; ok {
		return s.grpc
	}
	if strings.HasSuffix(code, "_not_found") {
		return codes.NotFound
	}
	return codes.FailedPrecondition
}

// internalMessage is the message of an error without a code: what failed
// is the daemon's business, in detail and in the log.
const internalMessage = "internal error (the detail and the daemon's log line of this request id say more)"

// readableMessage splits err into the message an API answer shows
// (errcode.Readable: from the code's sentence on, "skill not found:
// acme.x") and the detail it keeps: the whole chain ("install: skill not
// found: acme.x") when it differs from the message, "" otherwise. An
// error without a code is internalMessage, its text the detail. Every
// route's error passes here once (writeError).
func readableMessage(err error) (message, detail string) {
	full := err.Error()
	if errcode.Of(err) == errcode.Internal {
		return internalMessage, full
	}
	message = errcode.Readable(err)
	if message == full {
		return message, ""
	}
	return message, full
}
