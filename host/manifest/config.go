package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/palyra-go/palyra/host/errcode"
)

// Limits of the [config] table and of the values an operator sets. They
// bound what a hostile manifest can make the host compile and what a
// config document handed to a call can weigh.
const (
	// MaxConfigSchemaBytes is the largest [config] schema, measured as
	// compact JSON.
	MaxConfigSchemaBytes = 64 << 10
	// MaxConfigKeys is the most properties a config schema may declare.
	MaxConfigKeys = 64
	// MaxConfigKeyBytes is the longest config key.
	MaxConfigKeyBytes = 64
	// MaxConfigValueBytes is the largest value of one key, as compact JSON.
	MaxConfigValueBytes = 16 << 10
	// MaxConfigBytes is the largest whole config document (every value of a
	// skill, as the compact JSON object a call receives).
	MaxConfigBytes = 256 << 10
)

// ErrConfigInvalid: a config value does not fit the schema of the skill's
// current version (wrong type, a key the schema does not declare, over a
// size limit). The message names the key and why; for a sensitive key it
// never quotes the value.
var ErrConfigInvalid = errcode.New("config_invalid", "invalid skill config")

// configURL is the base URI under which a config schema is compiled.
const configURL = "urn:palyra:skill:config-schema"

// Config is the [config] table, a Palyra-Go extension (Palyra's manifest
// has no such key): the operator configuration a skill reads at run time
// through the SDK (skill.Config). Schema is a JSON Schema of an object
// whose top-level properties are the config keys; Sensitive lists the keys
// whose values are secrets (kept in the vault, shown redacted).
//
// In skill.toml, schema is a TOML table, like a tool's input_schema, or a
// string holding the schema as a JSON object (handier for nested schemas);
// Parse turns the string form into the table form.
type Config struct {
	Schema    map[string]any `toml:"schema" json:"schema"`
	Sensitive []string       `toml:"sensitive,omitempty" json:"sensitive,omitempty"`
}

// configKeyReason checks the config key rule: a lower-case letter, then
// lower-case letters, digits, '_', '-' or '.', at most MaxConfigKeyBytes.
// It returns "" for a valid key.
func configKeyReason(k string) string {
	if k == "" {
		return "must not be empty"
	}
	if len(k) > MaxConfigKeyBytes {
		return fmt.Sprintf("is %d bytes, over the %d-byte limit", len(k), MaxConfigKeyBytes)
	}
	if k[0] < 'a' || k[0] > 'z' {
		return fmt.Sprintf("must start with a lower-case letter, found %q", k[0])
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Sprintf("must contain only a-z, 0-9, '_', '-' and '.', found %q at byte %d", c, i)
		}
	}
	return ""
}

// ValidConfigKey reports whether k follows the config key rule.
func ValidConfigKey(k string) bool { return configKeyReason(k) == "" }

// decodeConfig decodes the [config] table.
func (d *decoder) config(t *table) *Config {
	c := &Config{}
	v, p, ok := t.take("schema")
	switch {
	case !ok:
		d.missing(p)
	default:
		switch x := v.(type) {
		case map[string]any:
			c.Schema = x
		case string:
			m, err := schemaFromJSON(x)
			if err != nil {
				d.addf(ErrParse, p, "a string schema must hold a JSON object: %v", err)
			} else {
				c.Schema = m
			}
		default:
			d.typeErr(p, "a table or a string holding a JSON object", v)
		}
	}
	t.strList("sensitive", &c.Sensitive, false)
	t.done()
	return c
}

// schemaFromJSON decodes a JSON object into the values a TOML table decodes
// to (int64 for integral numbers, float64 for others), so that the two
// spellings of a schema give the same Manifest.
func schemaFromJSON(s string) (map[string]any, error) {
	if len(s) > MaxConfigSchemaBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", len(s), MaxConfigSchemaBytes)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New(truncate(oneLine(err.Error()), 200))
	}
	if dec.More() {
		return nil, errors.New("text after the object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("found %s", jsonKind(v))
	}
	out, err := fromJSONNumbers(m, 0)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func fromJSONNumbers(v any, depth int) (any, error) {
	if depth > MaxNesting {
		return nil, fmt.Errorf("nested more than %d levels deep", MaxNesting)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c, err := fromJSONNumbers(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case []any:
		for i, e := range x {
			c, err := fromJSONNumbers(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s out of range", truncate(string(x), 40))
		}
		return f, nil
	}
	return v, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a value of Go type %T", v)
}

// config checks the [config] rules: the schema compiles, describes an
// object (type "object") with at most MaxConfigKeys properties named by the
// key rule, fits MaxConfigSchemaBytes; its required and sensitive keys are
// declared properties; a sensitive property has no default (it would be a
// secret in plain text in the manifest).
func (v *validator) config(c *Config) {
	const p = "config.schema"
	if c.Schema == nil {
		return // reported by the decoder
	}
	var col collector
	jv := toJSON(&col, p, c.Schema, 0)
	if len(col.errs) > 0 {
		v.errs = append(v.errs, col.errs...)
		return
	}
	if b, err := json.Marshal(jv); err == nil && len(b) > MaxConfigSchemaBytes {
		v.fail(p, "is %d bytes as JSON, over the %d-byte limit", len(b), MaxConfigSchemaBytes)
		return
	}
	if t, _ := c.Schema["type"].(string); t != "object" {
		v.fail(joinKey(p, "type"), `must be "object" (the config is an object of keys)`)
	}
	props, _ := c.Schema["properties"].(map[string]any)
	if _, has := c.Schema["properties"]; has && props == nil {
		v.fail(joinKey(p, "properties"), "must be a table of property schemas")
	}
	if len(props) > MaxConfigKeys {
		v.fail(joinKey(p, "properties"), "declares %d keys, over the limit of %d", len(props), MaxConfigKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if r := configKeyReason(k); r != "" {
			v.fail(joinKey(joinKey(p, "properties"), k), "config key %s", r)
		}
		if _, ok := props[k].(map[string]any); !ok {
			if _, isBool := props[k].(bool); !isBool {
				v.fail(joinKey(joinKey(p, "properties"), k), "must be a table (a JSON Schema)")
			}
		}
	}
	if req, has := c.Schema["required"]; has {
		list, ok := req.([]any)
		if !ok {
			v.fail(joinKey(p, "required"), "must be an array of property names")
		}
		for i, e := range list {
			s, _ := e.(string)
			if _, ok := props[s]; !ok {
				v.fail(joinIndex(joinKey(p, "required"), i), "names %q, which is not a property of the schema", truncate(s, 80))
			}
		}
	}
	seen := map[string]bool{}
	for i, s := range c.Sensitive {
		ip := joinIndex("config.sensitive", i)
		prop, ok := props[s]
		switch {
		case !ok:
			v.fail(ip, "names %q, which is not a property of config.schema", truncate(s, 80))
		case seen[s]:
			v.fail(ip, "names %q twice", s)
		default:
			if pm, _ := prop.(map[string]any); pm != nil {
				if _, has := pm["default"]; has {
					v.fail(ip, "sensitive key %q must not have a default (it would be a secret in plain text in the manifest)", s)
				}
			}
		}
		seen[s] = true
	}
	if len(v.errs) > 0 {
		return
	}
	if _, errs := compileConfig(p, jv.(map[string]any)); len(errs) > 0 {
		v.errs = append(v.errs, errs...)
	}
}

// compileConfig compiles a config schema (already converted to JSON values)
// as the whole object, once more without its top-level "required" (for
// checking values while some keys are still unset), and each property's
// subschema by its JSON pointer, so that $ref to $defs keeps working.
func compileConfig(path string, jv map[string]any) (cs *compiledConfig, errs []pending) {
	defer func() {
		if r := recover(); r != nil {
			cs, errs = nil, []pending{{path: path, reason: fmt.Sprintf("not a valid JSON Schema: compiler failed: %v", r), err: ErrValidation}}
		}
	}()
	relaxed := maps.Clone(jv)
	delete(relaxed, "required")
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource(configURL, jv); err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + truncate(oneLine(err.Error()), maxReasonBytes), err: ErrValidation, cause: err}}
	}
	if err := comp.AddResource(configURL+":relaxed", relaxed); err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + truncate(oneLine(err.Error()), maxReasonBytes), err: ErrValidation, cause: err}}
	}
	whole, err := comp.Compile(configURL)
	if err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + compileReason(err), err: ErrValidation, cause: err}}
	}
	rel, err := comp.Compile(configURL + ":relaxed")
	if err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + compileReason(err), err: ErrValidation, cause: err}}
	}
	cs = &compiledConfig{whole: whole, relaxed: rel, props: map[string]*jsonschema.Schema{}}
	props, _ := jv["properties"].(map[string]any)
	for k := range props {
		s, err := comp.Compile(configURL + "#/properties/" + jsonPointerEscape(k))
		if err != nil {
			return nil, []pending{{path: joinKey(joinKey(path, "properties"), k), reason: "not a valid JSON Schema: " + compileReason(err), err: ErrValidation, cause: err}}
		}
		cs.props[k] = s
	}
	return cs, nil
}

func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

type compiledConfig struct {
	whole, relaxed *jsonschema.Schema
	props          map[string]*jsonschema.Schema
}

// ConfigSchema is the compiled [config] of a manifest: it checks values an
// operator sets and tells which keys are required, sensitive or defaulted.
// It is immutable and safe for concurrent use.
type ConfigSchema struct {
	c         *compiledConfig
	doc       json.RawMessage
	keys      []string
	required  []string
	sensitive map[string]bool
	defaults  map[string]json.RawMessage
	types     map[string]string
}

// ConfigSchema compiles the manifest's [config]; it returns nil and no
// error when the manifest has none. Parse has already checked the schema,
// so for a parsed manifest it does not fail.
func (m *Manifest) ConfigSchema() (*ConfigSchema, error) {
	if m.Config == nil {
		return nil, nil
	}
	var col collector
	jv := toJSON(&col, "config.schema", m.Config.Schema, 0)
	if len(col.errs) > 0 {
		return nil, first(col.errs, nil)
	}
	obj, ok := jv.(map[string]any)
	if !ok {
		return nil, &FieldError{Path: "config.schema", Reason: "must be a table (a JSON Schema object)", Err: ErrValidation}
	}
	c, errs := compileConfig("config.schema", obj)
	if len(errs) > 0 {
		return nil, first(errs, nil)
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, &FieldError{Path: "config.schema", Reason: err.Error(), Err: ErrValidation}
	}
	s := &ConfigSchema{c: c, doc: doc, sensitive: map[string]bool{}, defaults: map[string]json.RawMessage{}, types: map[string]string{}}
	props, _ := obj["properties"].(map[string]any)
	s.keys = slices.Sorted(maps.Keys(props))
	for k, p := range props {
		pm, _ := p.(map[string]any)
		if d, ok := pm["default"]; ok {
			if b, err := json.Marshal(d); err == nil {
				s.defaults[k] = b
			}
		}
		if t, ok := pm["type"].(string); ok {
			s.types[k] = t
		}
	}
	if req, ok := obj["required"].([]any); ok {
		for _, e := range req {
			if k, ok := e.(string); ok && !slices.Contains(s.required, k) {
				s.required = append(s.required, k)
			}
		}
		sort.Strings(s.required)
	}
	for _, k := range m.Config.Sensitive {
		s.sensitive[k] = true
	}
	return s, nil
}

// Schema returns the schema as compact JSON (for a console form).
func (s *ConfigSchema) Schema() json.RawMessage { return slices.Clone(s.doc) }

// Keys returns the declared keys, sorted.
func (s *ConfigSchema) Keys() []string { return slices.Clone(s.keys) }

// Has reports whether key is a declared key.
func (s *ConfigSchema) Has(key string) bool { _, ok := s.c.props[key]; return ok }

// Required returns the keys the schema requires, sorted.
func (s *ConfigSchema) Required() []string { return slices.Clone(s.required) }

// Sensitive reports whether key is sensitive.
func (s *ConfigSchema) Sensitive(key string) bool { return s.sensitive[key] }

// Type returns the "type" keyword of key's schema when it is one string
// ("string", "integer", ...), else "".
func (s *ConfigSchema) Type(key string) string { return s.types[key] }

// Default returns key's "default" as JSON, if the schema gives one.
func (s *ConfigSchema) Default(key string) (json.RawMessage, bool) {
	d, ok := s.defaults[key]
	return slices.Clone(d), ok
}

// ConfigValueError reports a value that does not fit key's schema. It wraps
// ErrConfigInvalid. For a sensitive key, Reason names the failing keyword
// only and never quotes the value.
type ConfigValueError struct {
	Key    string
	Reason string
}

// Error returns "config key <key>: <reason>".
func (e *ConfigValueError) Error() string {
	return fmt.Sprintf("%s: config key %q: %s", ErrConfigInvalid.Error(), e.Key, e.Reason)
}

// Unwrap returns ErrConfigInvalid.
func (e *ConfigValueError) Unwrap() error { return ErrConfigInvalid }

// ValidateValue checks one value (JSON) against key's schema: the key must
// be declared, the value valid JSON of at most MaxConfigValueBytes that the
// property's schema accepts. The error is a *ConfigValueError.
func (s *ConfigSchema) ValidateValue(key string, value json.RawMessage) error {
	sch, ok := s.c.props[key]
	if !ok {
		return &ConfigValueError{Key: truncate(key, MaxConfigKeyBytes+8), Reason: "the config schema declares no such key (keys: " + strings.Join(s.keys, ", ") + ")"}
	}
	if len(value) > MaxConfigValueBytes {
		return &ConfigValueError{Key: key, Reason: fmt.Sprintf("value is %d bytes, over the %d-byte limit", len(value), MaxConfigValueBytes)}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return &ConfigValueError{Key: key, Reason: "value is not valid JSON"}
	}
	return s.check(sch, key, v)
}

// check validates v with sch and reports the failure, naming the keyword
// only for a sensitive key.
func (s *ConfigSchema) check(sch *jsonschema.Schema, key string, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ConfigValueError{Key: key, Reason: "value cannot be validated"}
		}
	}()
	verr := sch.Validate(v)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return &ConfigValueError{Key: key, Reason: "does not fit the schema"}
	}
	if s.sensitive[key] {
		return &ConfigValueError{Key: key, Reason: "sensitive value does not fit the schema (keyword " + keywordOf(ve) + "; the value is not shown)"}
	}
	loc, why := describe(ve)
	if loc != "" {
		why = "at " + strconv.Quote(loc) + ": " + why
	}
	return &ConfigValueError{Key: key, Reason: why}
}

// keywordOf names the keyword of the deepest failure of ve.
func keywordOf(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	if ve.ErrorKind == nil {
		return "?"
	}
	kp := ve.ErrorKind.KeywordPath()
	if len(kp) == 0 {
		return "?"
	}
	return kp[len(kp)-1]
}

// Missing returns the required keys that values (set keys) lacks and that
// have no default, sorted.
func (s *ConfigSchema) Missing(values map[string]json.RawMessage) []string {
	var out []string
	for _, k := range s.required {
		if _, ok := values[k]; ok {
			continue
		}
		if _, ok := s.defaults[k]; ok {
			continue
		}
		out = append(out, k)
	}
	return out
}

// Effective returns the config document a call receives: every default,
// then every value set, as one compact JSON object in key order. It
// checks the whole object against the schema without its required list
// (constraints across keys) and against MaxConfigBytes; a value that no
// longer fits its key is reported too. Keys the schema does not declare are
// reported, never dropped silently.
func (s *ConfigSchema) Effective(values map[string]json.RawMessage) (json.RawMessage, error) {
	merged := make(map[string]json.RawMessage, len(s.defaults)+len(values))
	maps.Copy(merged, s.defaults)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if err := s.ValidateValue(k, values[k]); err != nil {
			errs = append(errs, err)
			continue
		}
		merged[k] = values[k]
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	doc, err := encodeObject(merged)
	if err != nil {
		return nil, err
	}
	if len(doc) > MaxConfigBytes {
		return nil, fmt.Errorf("%w: the config is %d bytes, over the %d-byte limit", ErrConfigInvalid, len(doc), MaxConfigBytes)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfigInvalid, err)
	}
	if err := s.checkWhole(v); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkWhole validates the object against the relaxed schema; a failure
// names the first key it is at, and quotes nothing of a sensitive key.
func (s *ConfigSchema) checkWhole(v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: config cannot be validated", ErrConfigInvalid)
		}
	}()
	verr := s.c.relaxed.Validate(v)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return fmt.Errorf("%w: the config does not fit the schema", ErrConfigInvalid)
	}
	loc, why := describe(ve)
	key := strings.SplitN(strings.TrimPrefix(loc, "/"), "/", 2)[0]
	if s.sensitive[key] {
		return &ConfigValueError{Key: key, Reason: "sensitive value does not fit the schema (keyword " + keywordOf(ve) + "; the value is not shown)"}
	}
	for k := range s.sensitive {
		// A failure on the whole object may quote it, sensitive values
		// included: say only which keyword failed.
		if key == "" && k != "" {
			return fmt.Errorf("%w: the config does not fit the schema (keyword %s)", ErrConfigInvalid, keywordOf(ve))
		}
	}
	if key == "" {
		return fmt.Errorf("%w: the config does not fit the schema: %s", ErrConfigInvalid, why)
	}
	return &ConfigValueError{Key: key, Reason: why}
}

// encodeObject writes values as one compact JSON object in key order.
func encodeObject(values map[string]json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(values)) {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, values[k]); err != nil {
			return nil, &ConfigValueError{Key: k, Reason: "value is not valid JSON"}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
