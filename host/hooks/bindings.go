package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits on the bindings file and its entries. The file is edited by people
// and by the CLI; these bound what a damaged or hostile file can make the
// daemon read and hold.
const (
	// SchemaVersion is the version of the bindings file this package writes
	// (Palyra's hooks schema version). Newer versions are ErrSchemaTooNew.
	SchemaVersion = 1
	// MaxBindingsFileBytes is the largest bindings file read.
	MaxBindingsFileBytes = 1 << 20
	// MaxEntries is the most bindings a file may hold.
	MaxEntries = 1024
	// MaxIDLength is the longest hook_id, plugin_id or tool_id, in bytes
	// (Palyra's limit for hook and plugin ids).
	MaxIDLength = 128
	// MaxOperatorFieldBytes is the longest operator field (display name,
	// notes, principals), in bytes.
	MaxOperatorFieldBytes = 4096
	// MaxHookTimeout is the longest time limit a binding (timeout_ms) or a
	// DispatcherConfig may set for one hook call.
	MaxHookTimeout = 60 * time.Second
)

// File is the content of a bindings file.
type File struct {
	// SchemaVersion is the file's version: SchemaVersion once parsed (the
	// version the file is written in).
	SchemaVersion uint32 `json:"schema_version"`
	// UpdatedAtUnixMs is when the file was last written, in Unix
	// milliseconds.
	UpdatedAtUnixMs int64 `json:"updated_at_unix_ms"`
	// Entries are the bindings, sorted by HookID.
	Entries []Binding `json:"entries"`
	// Migrated is set by Parse when the file was in a legacy form (see the
	// package doc); the next write saves it in the current form. It is not
	// part of the file.
	Migrated bool `json:"-"`
}

// Binding binds a hook to an event and to the skill whose tool runs it.
type Binding struct {
	// HookID names the binding: lower-case [a-z0-9._-], at most MaxIDLength
	// bytes, unique in the file.
	HookID string `json:"hook_id"`
	// Event is the event the hook runs for, in normalized form (see
	// NormalizeEvent).
	Event string `json:"event"`
	// PluginID is the skill id of the hook skill (Palyra's plugin id; in
	// Palyra-Go a plugin is a skill). Same syntax as HookID.
	PluginID string `json:"plugin_id"`
	// ToolID is the tool of the skill to call (a Palyra-Go extension). Empty
	// means the skill manifest's operator.plugin.default_tool_id, which the
	// CallFunc resolves. Trimmed, [a-z0-9._:-], at most MaxIDLength bytes.
	ToolID string `json:"tool_id,omitempty"`
	// TimeoutMs is the hook's time limit in milliseconds (a Palyra-Go
	// extension); 0 means the Dispatcher's Timeout. At most MaxHookTimeout.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
	// OnFailure says what a run phase does when this hook fails (an
	// error, a timeout, output that is not JSON, a decision its phase does
	// not allow): OnFailureOpen goes on as if the hook had said continue,
	// OnFailureClosed fails the call. Empty means the phase's default
	// (DefaultOnFailure: closed for run:before_*, open for run:after_*). A
	// Palyra-Go extension, allowed on run phases only; see FailClosed.
	OnFailure string `json:"on_failure,omitempty"`
	// Enabled says whether the hook runs.
	Enabled bool `json:"enabled"`
	// Operator holds free-form data about who owns and changed the binding.
	Operator Operator `json:"operator"`
	// CreatedAtUnixMs and UpdatedAtUnixMs are set by Store, in Unix
	// milliseconds.
	CreatedAtUnixMs int64 `json:"created_at_unix_ms"`
	UpdatedAtUnixMs int64 `json:"updated_at_unix_ms"`
}

// Operator is the operator metadata of a binding. Every field is optional,
// trimmed, and at most MaxOperatorFieldBytes bytes.
type Operator struct {
	DisplayName    string `json:"display_name,omitempty"`
	Notes          string `json:"notes,omitempty"`
	OwnerPrincipal string `json:"owner_principal,omitempty"`
	UpdatedBy      string `json:"updated_by,omitempty"`
}

// What a run phase does when a hook fails (Binding.OnFailure).
const (
	// OnFailureOpen: the failed hook counts as a continue; the call goes
	// on, and the failure is logged and reported as an annotation.
	OnFailureOpen = "open"
	// OnFailureClosed: the failed hook fails the call (run_hook_failed).
	OnFailureClosed = "closed"
)

// DefaultOnFailure is what a run phase does when a hook bound without
// on_failure fails: closed for the phases that gate a call
// (run:before_run, run:before_tool, run:before_delivery), whose hooks are
// checks an operator put in the call's way, so a check that could not run
// must not let the call through; open for the phases that observe a call
// (run:after_tool, run:after_run), whose failure should not undo a call
// that already ran. Notification events have no default ("").
func DefaultOnFailure(event string) string {
	switch event {
	case EventRunBeforeRun, EventRunBeforeTool, EventRunBeforeDelivery:
		return OnFailureClosed
	case EventRunAfterTool, EventRunAfterRun:
		return OnFailureOpen
	}
	return ""
}

// EffectiveOnFailure is the binding's OnFailure, or its event's
// DefaultOnFailure when it sets none.
func (b Binding) EffectiveOnFailure() string {
	if b.OnFailure != "" {
		return b.OnFailure
	}
	return DefaultOnFailure(b.Event)
}

// FailClosed reports whether a failure of this hook fails the call it ran
// for (EffectiveOnFailure is OnFailureClosed).
func (b Binding) FailClosed() bool { return b.EffectiveOnFailure() == OnFailureClosed }

// Timeout returns the binding's own time limit, or 0 when it has none.
func (b Binding) Timeout() time.Duration {
	return time.Duration(b.TimeoutMs) * time.Millisecond
}

// Parse decodes and validates a bindings file, migrating the legacy forms
// described in the package doc (File.Migrated is then set). Empty or
// all-white-space input is an empty file. Errors wrap ErrInvalidBindings
// (with a *FieldError naming the entry and field) or ErrSchemaTooNew.
// Entries come back sorted by hook id, with ids and events normalized.
func Parse(data []byte) (*File, error) {
	f, err := parse(data)
	if err != nil {
		if errors.Is(err, ErrSchemaTooNew) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidBindings, err)
	}
	return f, nil
}

func emptyFile() *File {
	return &File{SchemaVersion: SchemaVersion, Entries: []Binding{}}
}

func parse(data []byte) (*File, error) {
	if len(data) > MaxBindingsFileBytes {
		return nil, fmt.Errorf("file is %d bytes, the limit is %d bytes (MaxBindingsFileBytes)", len(data), MaxBindingsFileBytes)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return emptyFile(), nil
	}
	f := emptyFile()
	var rawEntries []json.RawMessage
	legacy := false
	switch trimmed[0] {
	case '[':
		// Legacy form (a): the entries without the wrapper.
		legacy = true
		entries, err := decodeArray(trimmed, "bindings")
		if err != nil {
			return nil, &FieldError{Index: -1, Err: err}
		}
		rawEntries = entries
	case '{':
		obj, keys, err := decodeObject(trimmed, "bindings file")
		if err != nil {
			return nil, fieldError("", err)
		}
		for _, k := range keys {
			switch k {
			case "schema_version", "updated_at_unix_ms", "entries":
			default:
				return nil, &FieldError{Index: -1, Field: k, Err: errors.New("unknown field (want schema_version, updated_at_unix_ms or entries)")}
			}
		}
		if raw, ok := obj["schema_version"]; ok {
			v, err := decodeUint(raw, 1<<32-1)
			if err != nil {
				return nil, &FieldError{Index: -1, Field: "schema_version", Err: err}
			}
			if v > SchemaVersion {
				return nil, fmt.Errorf("%w: schema_version is %d, this program reads up to %d", ErrSchemaTooNew, v, SchemaVersion)
			}
			legacy = v < SchemaVersion
		} else {
			// Legacy form (b): a wrapper without a version.
			legacy = true
		}
		if raw, ok := obj["updated_at_unix_ms"]; ok {
			v, err := decodeUint(raw, 1<<63-1)
			if err != nil {
				return nil, &FieldError{Index: -1, Field: "updated_at_unix_ms", Err: err}
			}
			f.UpdatedAtUnixMs = int64(v)
		}
		raw, ok := obj["entries"]
		if !ok {
			return nil, &FieldError{Index: -1, Field: "entries", Err: errors.New("missing")}
		}
		entries, err := decodeArray(raw, "entries")
		if err != nil {
			return nil, &FieldError{Index: -1, Field: "entries", Err: err}
		}
		rawEntries = entries
	default:
		return nil, &FieldError{Index: -1, Err: errors.New("bindings file must be a JSON object (or, in the legacy form, an array)")}
	}
	f.Migrated = legacy
	seen := make(map[string]int, len(rawEntries))
	for i, raw := range rawEntries {
		b, migrated, err := decodeBinding(raw)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.Index = i
				return nil, fe
			}
			return nil, &FieldError{Index: i, Err: err}
		}
		if j, dup := seen[b.HookID]; dup {
			return nil, &FieldError{Index: i, Field: "hook_id", Err: fmt.Errorf("duplicate hook id %s (also entries[%d])", quote(b.HookID), j)}
		}
		seen[b.HookID] = i
		f.Migrated = f.Migrated || migrated
		f.Entries = append(f.Entries, b)
	}
	sortEntries(f.Entries)
	return f, nil
}

// bindingKeys are the keys an entry may have. skill_id is the legacy
// spelling of plugin_id.
var bindingKeys = []string{"hook_id", "event", "plugin_id", "skill_id", "tool_id", "timeout_ms", "on_failure", "enabled", "operator", "created_at_unix_ms", "updated_at_unix_ms"}

// decodeBinding decodes and validates one entry. The *FieldError it returns
// has Index -1; the caller sets it. migrated reports a legacy spelling.
func decodeBinding(raw json.RawMessage) (b Binding, migrated bool, err error) {
	obj, keys, err := decodeObject(raw, "entry")
	if err != nil {
		return b, false, fieldError("", err)
	}
	for _, k := range keys {
		if !slices.Contains(bindingKeys, k) {
			return b, false, &FieldError{Index: -1, Field: k, Err: errors.New("unknown field")}
		}
	}
	str := func(key string, required bool) (string, error) {
		raw, ok := obj[key]
		if !ok {
			if required {
				return "", &FieldError{Index: -1, Field: key, Err: errors.New("missing")}
			}
			return "", nil
		}
		s, err := decodeString(raw)
		if err != nil {
			return "", &FieldError{Index: -1, Field: key, Err: err}
		}
		return s, nil
	}
	if b.HookID, err = str("hook_id", true); err != nil {
		return b, false, err
	}
	if b.Event, err = str("event", true); err != nil {
		return b, false, err
	}
	_, hasPlugin := obj["plugin_id"]
	_, hasSkill := obj["skill_id"]
	switch {
	case hasPlugin && hasSkill:
		return b, false, &FieldError{Index: -1, Field: "skill_id", Err: errors.New("both plugin_id and its legacy spelling skill_id are set")}
	case hasSkill:
		// Legacy form (c).
		migrated = true
		if b.PluginID, err = str("skill_id", true); err != nil {
			return b, false, err
		}
	default:
		if b.PluginID, err = str("plugin_id", true); err != nil {
			return b, false, err
		}
	}
	if b.ToolID, err = str("tool_id", false); err != nil {
		return b, false, err
	}
	if raw, ok := obj["timeout_ms"]; ok {
		v, err := decodeUint(raw, 1<<63-1)
		if err != nil {
			return b, false, &FieldError{Index: -1, Field: "timeout_ms", Err: err}
		}
		b.TimeoutMs = int64(v)
	}
	if b.OnFailure, err = str("on_failure", false); err != nil {
		return b, false, err
	}
	raw, ok := obj["enabled"]
	if !ok {
		return b, false, &FieldError{Index: -1, Field: "enabled", Err: errors.New("missing")}
	}
	if err := json.Unmarshal(raw, &b.Enabled); err != nil || raw[0] == 'n' {
		return b, false, &FieldError{Index: -1, Field: "enabled", Err: fmt.Errorf("must be a boolean, not %s", describeRaw(raw))}
	}
	if raw, ok := obj["operator"]; ok && !isNull(raw) {
		op, err := decodeOperator(raw)
		if err != nil {
			return b, false, err
		}
		b.Operator = op
	}
	for _, k := range []string{"created_at_unix_ms", "updated_at_unix_ms"} {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		v, err := decodeUint(raw, 1<<63-1)
		if err != nil {
			return b, false, &FieldError{Index: -1, Field: k, Err: err}
		}
		if k == "created_at_unix_ms" {
			b.CreatedAtUnixMs = int64(v)
		} else {
			b.UpdatedAtUnixMs = int64(v)
		}
	}
	rawEvent := b.Event
	nb, err := normalizeBinding(b)
	if err != nil {
		return b, false, err
	}
	if nb.Event != rawEvent {
		// Legacy form (d).
		migrated = true
	}
	return nb, migrated, nil
}

var operatorKeys = []string{"display_name", "notes", "owner_principal", "updated_by"}

func decodeOperator(raw json.RawMessage) (Operator, error) {
	var op Operator
	obj, keys, err := decodeObject(raw, "operator")
	if err != nil {
		return op, fieldError("operator", err)
	}
	for _, k := range keys {
		if !slices.Contains(operatorKeys, k) {
			return op, &FieldError{Index: -1, Field: "operator." + k, Err: errors.New("unknown field")}
		}
		if isNull(obj[k]) {
			continue
		}
		s, err := decodeString(obj[k])
		if err != nil {
			return op, &FieldError{Index: -1, Field: "operator." + k, Err: err}
		}
		switch k {
		case "display_name":
			op.DisplayName = s
		case "notes":
			op.Notes = s
		case "owner_principal":
			op.OwnerPrincipal = s
		case "updated_by":
			op.UpdatedBy = s
		}
	}
	return op, nil
}

// normalizeBinding trims and lower-cases a binding's ids, normalizes its
// event and checks every field. Errors are *FieldError with Index -1.
func normalizeBinding(b Binding) (Binding, error) {
	var err error
	if b.HookID, err = normalizeID(b.HookID); err != nil {
		return b, &FieldError{Index: -1, Field: "hook_id", Err: err}
	}
	if b.PluginID, err = normalizeID(b.PluginID); err != nil {
		return b, &FieldError{Index: -1, Field: "plugin_id", Err: err}
	}
	if b.Event, err = NormalizeEvent(b.Event); err != nil {
		return b, &FieldError{Index: -1, Field: "event", Err: err}
	}
	if b.ToolID, err = normalizeToolID(b.ToolID); err != nil {
		return b, &FieldError{Index: -1, Field: "tool_id", Err: err}
	}
	if b.TimeoutMs < 0 || b.TimeoutMs > MaxHookTimeout.Milliseconds() {
		return b, &FieldError{Index: -1, Field: "timeout_ms", Err: fmt.Errorf("%d ms is outside 0..%d ms (MaxHookTimeout)", b.TimeoutMs, MaxHookTimeout.Milliseconds())}
	}
	switch b.OnFailure = strings.ToLower(strings.TrimSpace(b.OnFailure)); {
	case b.OnFailure == "":
	case b.OnFailure != OnFailureOpen && b.OnFailure != OnFailureClosed:
		return b, &FieldError{Index: -1, Field: "on_failure", Err: fmt.Errorf("%s is not %q or %q", quote(b.OnFailure), OnFailureOpen, OnFailureClosed)}
	case !IsRunPhase(b.Event):
		return b, &FieldError{Index: -1, Field: "on_failure", Err: fmt.Errorf("applies to run phases only; %s is a notification, whose hooks cannot fail anything", b.Event)}
	}
	if b.CreatedAtUnixMs < 0 {
		return b, &FieldError{Index: -1, Field: "created_at_unix_ms", Err: errors.New("negative")}
	}
	if b.UpdatedAtUnixMs < 0 {
		return b, &FieldError{Index: -1, Field: "updated_at_unix_ms", Err: errors.New("negative")}
	}
	fields := []struct {
		name string
		v    *string
	}{
		{"operator.display_name", &b.Operator.DisplayName},
		{"operator.notes", &b.Operator.Notes},
		{"operator.owner_principal", &b.Operator.OwnerPrincipal},
		{"operator.updated_by", &b.Operator.UpdatedBy},
	}
	for _, f := range fields {
		if *f.v, err = normalizeOperatorField(*f.v); err != nil {
			return b, &FieldError{Index: -1, Field: f.name, Err: err}
		}
	}
	return b, nil
}

// normalizeID trims and lower-cases a hook or plugin id and checks it is
// non-empty, at most MaxIDLength bytes and only [a-z0-9._-].
func normalizeID(s string) (string, error) {
	id := strings.ToLower(strings.TrimSpace(s))
	if id == "" {
		return "", errors.New("empty id")
	}
	if len(id) > MaxIDLength {
		return "", fmt.Errorf("id is %d bytes, the limit is %d bytes (MaxIDLength)", len(id), MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isIDByte(c) {
			return "", fmt.Errorf("id %s has %q at byte %d; only [a-z0-9._-] are allowed", quote(s), c, i)
		}
	}
	return id, nil
}

// normalizeToolID trims a tool id (empty stays empty) and checks it is a
// Palyra identifier ([a-z0-9._:-]) of at most MaxIDLength bytes. Tool ids
// are not lower-cased: the manifest does not lower-case them either.
func normalizeToolID(s string) (string, error) {
	id := strings.TrimSpace(s)
	if id == "" {
		return "", nil
	}
	if len(id) > MaxIDLength {
		return "", fmt.Errorf("id is %d bytes, the limit is %d bytes (MaxIDLength)", len(id), MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isIDByte(c) && c != ':' {
			return "", fmt.Errorf("tool id %s has %q at byte %d; only [a-z0-9._:-] are allowed", quote(s), c, i)
		}
	}
	return id, nil
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func normalizeOperatorField(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxOperatorFieldBytes {
		return "", fmt.Errorf("%d bytes, the limit is %d bytes (MaxOperatorFieldBytes)", len(s), MaxOperatorFieldBytes)
	}
	return s, nil
}

func sortEntries(entries []Binding) {
	slices.SortFunc(entries, func(a, b Binding) int { return strings.Compare(a.HookID, b.HookID) })
}

// Marshal validates f and encodes it in the current form: schema_version 1,
// entries normalized and sorted by hook id, two-space indent, a trailing
// newline. It does not change f. Errors wrap ErrInvalidBinding (with a
// *FieldError naming the entry) or ErrTooManyHooks.
func Marshal(f *File) ([]byte, error) {
	if len(f.Entries) > MaxEntries {
		return nil, fmt.Errorf("%w: %d bindings, the limit is %d (MaxEntries)", ErrTooManyHooks, len(f.Entries), MaxEntries)
	}
	out := File{SchemaVersion: SchemaVersion, UpdatedAtUnixMs: f.UpdatedAtUnixMs, Entries: make([]Binding, 0, len(f.Entries))}
	if out.UpdatedAtUnixMs < 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidBinding, &FieldError{Index: -1, Field: "updated_at_unix_ms", Err: errors.New("negative")})
	}
	seen := make(map[string]int, len(f.Entries))
	for i, b := range f.Entries {
		nb, err := normalizeBinding(b)
		if err != nil {
			var fe *FieldError
			errors.As(err, &fe)
			fe.Index = i
			return nil, fmt.Errorf("%w: %w", ErrInvalidBinding, fe)
		}
		if j, dup := seen[nb.HookID]; dup {
			return nil, fmt.Errorf("%w: %w", ErrInvalidBinding, &FieldError{Index: i, Field: "hook_id", Err: fmt.Errorf("duplicate hook id %s (also entries[%d])", quote(nb.HookID), j)})
		}
		seen[nb.HookID] = i
		out.Entries = append(out.Entries, nb)
	}
	sortEntries(out.Entries)
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("hooks: encode bindings: %w", err)
	}
	return append(data, '\n'), nil
}

// fieldError returns err as a *FieldError (Index -1) for the field named
// prefix, extending the field of a *FieldError err already is.
func fieldError(prefix string, err error) *FieldError {
	var fe *FieldError
	if errors.As(err, &fe) {
		if prefix != "" {
			fe.Field = prefix + "." + fe.Field
		}
		return fe
	}
	return &FieldError{Index: -1, Field: prefix, Err: err}
}

// jsonError describes a decoding error of encoding/json.
func jsonError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// decodeObject decodes one JSON object with no trailing data, refusing
// duplicate keys (encoding/json would keep the last one, so a file could say
// one thing to one reader and another to the next). It returns the values by
// key and the keys in file order.
func decodeObject(data []byte, what string) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, jsonError(err)
	}
	if tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("%s must be an object, not %s", what, describeRaw(data))
	}
	obj := make(map[string]json.RawMessage)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, jsonError(err)
		}
		key, _ := tok.(string)
		if _, dup := obj[key]; dup {
			return nil, nil, &FieldError{Index: -1, Field: key, Err: fmt.Errorf("duplicate key in %s", what)}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, &FieldError{Index: -1, Field: key, Err: jsonError(err)}
		}
		obj[key] = v
		keys = append(keys, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, jsonError(err)
	}
	if err := expectEOF(dec); err != nil {
		return nil, nil, err
	}
	return obj, keys, nil
}

// decodeArray decodes one JSON array of at most MaxEntries elements with no
// trailing data.
func decodeArray(data []byte, what string) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%s must be an array, not %s", what, describeRaw(data))
	}
	var out []json.RawMessage
	for dec.More() {
		if len(out) == MaxEntries {
			return nil, fmt.Errorf("more than %d %s, the limit is %d (MaxEntries)", MaxEntries, what, MaxEntries)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("element %d: %w", len(out), jsonError(err))
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(err)
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	return out, nil
}

func expectEOF(dec *json.Decoder) error {
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value at offset %d", dec.InputOffset())
	}
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("trailing data after the JSON value at offset %d", dec.InputOffset())
	}
	return nil
}

// decodeString decodes a JSON string (not null).
func decodeString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("must be a string, not %s", describeRaw(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("invalid string: %v", err)
	}
	return s, nil
}

// decodeUint decodes a non-negative JSON integer no greater than limit.
func decodeUint(raw json.RawMessage, limit uint64) (uint64, error) {
	if len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
		return 0, fmt.Errorf("must be a non-negative integer, not %s", describeRaw(raw))
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || v > limit {
		return 0, fmt.Errorf("must be an integer from 0 to %d, not %s", limit, quote(string(raw)))
	}
	return v, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// describeRaw names the JSON type of a value for error messages.
func describeRaw(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
