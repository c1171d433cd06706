package wasmrt

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/sdk/abi"
)

// ABIVersion is the ABI this runtime implements (sdk/ABI.md §10).
const ABIVersion = abi.Version

// ABI limits (sdk/ABI.md §3–§6).
const (
	MaxInputBytes             = abi.MaxInputBytes          // input document (§3)
	MaxOutputBytes            = abi.MaxOutputBytes         // output buffer (§4)
	MaxRequestBytes           = abi.MaxRequestBytes        // capability request (§5)
	MaxResponseBytes          = abi.MaxResponseBytes       // capability response (§5)
	DefaultMaxCapabilityCalls = abi.DefaultCapabilityCalls // per invocation (§5)
	MaxLogRecordBytes         = abi.MaxLogRecordBytes      // one log record (§6)
	MaxLogBytes               = abi.MaxLogBytes
	maxToolErrorCode          = abi.MaxErrorCodeBytes    // §4
	maxToolErrorMessage       = abi.MaxErrorMessageBytes // §4
	maxGrantsPerKind          = 10000                    // handles of a kind stay in its range
	maxCapabilityErrorMessage = 1 << 10
)

// CapabilityKind is the kind of capability a handle stands for.
type CapabilityKind string

// Capability kinds, with handle bases 10000, 20000, 30000 and 40000.
const (
	KindHTTP    CapabilityKind = "http"
	KindSecret  CapabilityKind = "secret"
	KindStorage CapabilityKind = "storage"
	KindChannel CapabilityKind = "channel"
)

type capKind int

const (
	kindHTTP capKind = iota
	kindSecret
	kindStorage
	kindChannel
	kindCount
)

var (
	kindImportNames = [kindCount]string{"http", "secret", "storage", "channel"}
	kindNames       = [kindCount]CapabilityKind{KindHTTP, KindSecret, KindStorage, KindChannel}
	kindBases       = [kindCount]int32{abi.HTTPHandleBase, abi.SecretHandleBase, abi.StorageHandleBase, abi.ChannelHandleBase}
)

// Grants are what the call may use, one list per kind: HTTP hosts (or
// "*.domain" patterns), secret keys, storage prefixes and channels, as the
// supervisor computed them (manifest ∩ policy). The runtime canonicalizes
// each list (trimmed, empties dropped, sorted byte-wise, de-duplicated) and
// numbers handles from it, exactly as Palyra does.
type Grants struct {
	HTTPHosts       []string
	SecretKeys      []string
	StoragePrefixes []string
	Channels        []string
}

// grantLists are canonical grant lists indexed by capKind.
type grantLists [kindCount][]string

func canonicalGrants(g Grants) (grantLists, error) {
	var out grantLists
	for k, list := range [kindCount][]string{g.HTTPHosts, g.SecretKeys, g.StoragePrefixes, g.Channels} {
		c := make([]string, 0, len(list))
		for _, s := range list {
			if s = strings.TrimSpace(s); s != "" {
				c = append(c, s)
			}
		}
		slices.Sort(c)
		c = slices.Compact(c)
		if len(c) > maxGrantsPerKind {
			return out, fmt.Errorf("%w: %d %s grants, at most %d", ErrInvalidInput, len(c), kindNames[k], maxGrantsPerKind)
		}
		out[k] = c
	}
	return out, nil
}

// handle is <kind>-handle: base + index, or -1.
func (g *grantLists) handle(k capKind, index int32) int32 {
	if index < 0 || int(index) >= len(g[k]) {
		return -1
	}
	return kindBases[k] + index
}

// lookup maps a handle back to its kind and grant.
func (g *grantLists) lookup(handle int32) (CapabilityKind, string, bool) {
	for k := range kindCount {
		i := handle - kindBases[k]
		if i >= 0 && int(i) < len(g[k]) {
			return kindNames[k], g[k][i], true
		}
	}
	return "", "", false
}

type grantEntry struct {
	Handle  int32  `json:"handle"`
	Host    string `json:"host,omitempty"`
	Key     string `json:"key,omitempty"`
	Prefix  string `json:"prefix,omitempty"`
	Channel string `json:"channel,omitempty"`
}

type inputDocument struct {
	ABI            string          `json:"abi"`
	InvocationID   string          `json:"invocation_id"`
	SkillID        string          `json:"skill_id"`
	ToolID         string          `json:"tool_id"`
	Input          json.RawMessage `json:"input"`
	Grants         inputGrants     `json:"grants"`
	DeadlineUnixMS int64           `json:"deadline_unix_ms"`
}

type inputGrants struct {
	HTTP     []grantEntry `json:"http"`
	Secrets  []grantEntry `json:"secrets"`
	Storage  []grantEntry `json:"storage"`
	Channels []grantEntry `json:"channels"`
}

// grantsDoc is a call's canonical grants and the JSON of the input
// document's "grants" member for them.
type grantsDoc struct {
	src   Grants // as the caller gave them (a copy)
	lists grantLists
	json  []byte
}

// grantsFor returns the canonical lists of g and their JSON, made again
// only when g differs from the grants of the module's last call. The
// result is shared between calls and never modified.
func (m *Module) grantsFor(g Grants) (*grantsDoc, error) {
	if c := m.grants.Load(); c != nil && c.src.equal(&g) {
		return c, nil
	}
	lists, err := canonicalGrants(g)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(inputGrantsOf(&lists))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	c := &grantsDoc{src: g.clone(), lists: lists, json: b}
	m.grants.Store(c)
	return c, nil
}

func (g *Grants) equal(o *Grants) bool {
	return slices.Equal(g.HTTPHosts, o.HTTPHosts) && slices.Equal(g.SecretKeys, o.SecretKeys) &&
		slices.Equal(g.StoragePrefixes, o.StoragePrefixes) && slices.Equal(g.Channels, o.Channels)
}

func (g Grants) clone() Grants {
	return Grants{HTTPHosts: slices.Clone(g.HTTPHosts), SecretKeys: slices.Clone(g.SecretKeys),
		StoragePrefixes: slices.Clone(g.StoragePrefixes), Channels: slices.Clone(g.Channels)}
}

// appendInputDocument appends the document of sdk/ABI.md §3 to dst, byte
// for byte what json.Marshal writes for it (buildInputDocument), without
// reflection: the ids and the input are copied as they are when they hold
// nothing json.Marshal would escape or compact differently, which is the
// common case; otherwise it falls back to buildInputDocument. Input that
// is not one JSON value (empty means null) fails with ErrInvalidInput: on
// the common path the compaction is the input's only JSON parse (a byte
// search for the characters json.Marshal escapes comes first).
func appendInputDocument(dst []byte, inv *Invocation, g *grantsDoc, deadline time.Time) ([]byte, error) {
	in := []byte(inv.Input)
	if len(in) == 0 {
		in = nullJSON
	}
	if !plainJSONString(inv.ID) || !plainJSONString(inv.SkillID) || !plainJSONString(inv.ToolID) || !plainRawJSON(in) {
		if !json.Valid(in) {
			return dst, errInputNotJSON
		}
		b, err := buildInputDocument(inv, &g.lists, deadline)
		return append(dst, b...), err
	}
	start := len(dst)
	dst = slices.Grow(dst, len(inputDocumentFrame)+len(inv.ID)+len(inv.SkillID)+len(inv.ToolID)+len(in)+len(g.json)+20)
	dst = append(dst, `{"abi":"`+ABIVersion+`","invocation_id":"`...)
	dst = append(dst, inv.ID...)
	dst = append(dst, `","skill_id":"`...)
	dst = append(dst, inv.SkillID...)
	dst = append(dst, `","tool_id":"`...)
	dst = append(dst, inv.ToolID...)
	dst = append(dst, `","input":`...)
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, in); err != nil {
		return dst[:start], errInputNotJSON
	}
	dst = buf.Bytes()
	dst = append(dst, `,"grants":`...)
	dst = append(dst, g.json...)
	dst = append(dst, `,"deadline_unix_ms":`...)
	dst = strconv.AppendInt(dst, deadline.UnixMilli(), 10)
	dst = append(dst, '}')
	if n := len(dst) - start; n > MaxInputBytes {
		return dst[:start], fmt.Errorf("%w: input document of %d bytes is over the %d-byte limit", ErrInvalidInput, n, MaxInputBytes)
	}
	return dst, nil
}

// errInputNotJSON is the error of an input that is not one JSON value.
var errInputNotJSON = fmt.Errorf("%w: input is not well-formed JSON", ErrInvalidInput)

// inputDocumentFrame is the input document's constant text, for sizing.
const inputDocumentFrame = `{"abi":"` + ABIVersion + `","invocation_id":"","skill_id":"","tool_id":"","input":,"grants":,"deadline_unix_ms":}`

var (
	nullJSON           = []byte("null")
	lineSeparator      = []byte("\u2028")
	paragraphSeparator = []byte("\u2029")
)

// plainJSONString reports whether json.Marshal writes s as itself in
// quotes: printable ASCII with no '"', '\\' and none of the characters it
// escapes for HTML ('<', '>', '&').
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainRawJSON reports whether json.Marshal writes the valid JSON b as
// json.Compact does: it holds none of the characters json.Marshal escapes
// for HTML ('<', '>', '&', U+2028, U+2029).
func plainRawJSON(b []byte) bool {
	return bytes.IndexAny(b, "<>&") < 0 && !bytes.Contains(b, lineSeparator) && !bytes.Contains(b, paragraphSeparator)
}

// inputGrantsOf is the "grants" member of the input document for g.
func inputGrantsOf(g *grantLists) inputGrants {
	var out inputGrants
	lists := [kindCount]*[]grantEntry{&out.HTTP, &out.Secrets, &out.Storage, &out.Channels}
	for k := range kindCount {
		entries := make([]grantEntry, len(g[k]))
		for i, s := range g[k] {
			e := grantEntry{Handle: kindBases[k] + int32(i)}
			switch capKind(k) {
			case kindHTTP:
				e.Host = s
			case kindSecret:
				e.Key = s
			case kindStorage:
				e.Prefix = s
			case kindChannel:
				e.Channel = s
			}
			entries[i] = e
		}
		*lists[k] = entries
	}
	return out
}

// buildInputDocument returns the document of sdk/ABI.md §3 with
// json.Marshal: the reference appendInputDocument matches, and its path
// for ids or input that json.Marshal escapes. input must be valid JSON or
// empty (null).
func buildInputDocument(inv *Invocation, g *grantLists, deadline time.Time) ([]byte, error) {
	in := json.RawMessage("null")
	if len(inv.Input) > 0 {
		in = inv.Input
	}
	doc := inputDocument{
		ABI:            ABIVersion,
		InvocationID:   inv.ID,
		SkillID:        inv.SkillID,
		ToolID:         inv.ToolID,
		Input:          in,
		DeadlineUnixMS: deadline.UnixMilli(),
	}
	doc.Grants = inputGrantsOf(g)
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if len(b) > MaxInputBytes {
		return nil, fmt.Errorf("%w: input document of %d bytes is over the %d-byte limit", ErrInvalidInput, len(b), MaxInputBytes)
	}
	return b, nil
}

func fillRandom(b []byte) {
	// crypto/rand.Read never returns an error (Go 1.24+).
	_, _ = rand.Read(b)
}
