// Package runtimetest provides an in-process capability Broker for tests of
// code that runs skills with package wasmrt. It holds no real authority:
// storage is a map, channel messages are recorded, secrets are described as
// absent and HTTP is denied unless the test supplies a handler.
package runtimetest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// Broker is an in-memory wasmrt.Broker. The zero value is ready to use and
// it is safe for concurrent use.
type Broker struct {
	// HTTP, when set, answers HTTP requests; otherwise they are denied.
	HTTP func(ctx context.Context, req wasmrt.CapabilityRequest) ([]byte, error)
	// Hook, when set, runs first for every request; a non-nil response or
	// error from it is the answer.
	Hook func(ctx context.Context, req wasmrt.CapabilityRequest) ([]byte, error)

	mu       sync.Mutex
	calls    []wasmrt.CapabilityRequest
	storage  map[string][]byte // key: grant prefix + "/" + key
	messages []Message
}

// Message is one channel send recorded by the Broker.
type Message struct {
	Channel string
	Text    string
}

// Calls returns the requests the Broker received, in order.
func (b *Broker) Calls() []wasmrt.CapabilityRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// Messages returns the channel messages sent so far.
func (b *Broker) Messages() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.messages)
}

// Put stores a value as if a guest had put it under the storage grant
// prefix.
func (b *Broker) Put(prefix, key string, value []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.storage == nil {
		b.storage = map[string][]byte{}
	}
	b.storage[prefix+"/"+key] = slices.Clone(value)
}

func denied(msg string) error {
	return &wasmrt.CapabilityError{Code: wasmrt.CodeDenied, Message: msg}
}

func invalid(msg string) error {
	return &wasmrt.CapabilityError{Code: wasmrt.CodeInvalidRequest, Message: msg}
}

// Call implements wasmrt.Broker.
func (b *Broker) Call(ctx context.Context, req wasmrt.CapabilityRequest) ([]byte, error) {
	b.mu.Lock()
	b.calls = append(b.calls, req)
	b.mu.Unlock()
	if b.Hook != nil {
		if resp, err := b.Hook(ctx, req); resp != nil || err != nil {
			return resp, err
		}
	}
	var op struct {
		Op          string          `json:"op"`
		Key         string          `json:"key"`
		ValueBase64 string          `json:"value_base64"`
		Prefix      string          `json:"prefix"`
		Text        string          `json:"text"`
		Message     json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(req.Request, &op); err != nil {
		return nil, invalid("request does not decode")
	}
	switch req.Kind {
	case wasmrt.KindHTTP:
		if b.HTTP == nil {
			return nil, denied("no HTTP in the test broker")
		}
		return b.HTTP(ctx, req)
	case wasmrt.KindSecret:
		if op.Op != "describe" {
			return nil, invalid("unknown op " + op.Op)
		}
		return json.Marshal(map[string]any{"scope": "", "key": req.Grant, "present": false})
	case wasmrt.KindChannel:
		if op.Op != "send" {
			return nil, invalid("unknown op " + op.Op)
		}
		b.mu.Lock()
		b.messages = append(b.messages, Message{Channel: req.Grant, Text: op.Text})
		b.mu.Unlock()
		return []byte(`{"delivered":true,"message_id":"test"}`), nil
	case wasmrt.KindStorage:
		return b.storageOp(req.Grant, op.Op, op.Key, op.ValueBase64, op.Prefix)
	}
	return nil, invalid("unknown capability kind")
}

func (b *Broker) storageOp(prefix, op, key, value, listPrefix string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.storage == nil {
		b.storage = map[string][]byte{}
	}
	full := prefix + "/" + key
	switch op {
	case "get":
		v, ok := b.storage[full]
		if !ok {
			return []byte(`{"found":false}`), nil
		}
		return json.Marshal(map[string]any{"found": true, "value_base64": base64.StdEncoding.EncodeToString(v)})
	case "put":
		v, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return nil, invalid("value_base64 is not base64")
		}
		b.storage[full] = v
		return []byte(`{}`), nil
	case "delete":
		_, ok := b.storage[full]
		delete(b.storage, full)
		return json.Marshal(map[string]bool{"deleted": ok})
	case "list":
		keys := []string{}
		for k := range b.storage {
			if rest, ok := strings.CutPrefix(k, prefix+"/"); ok && strings.HasPrefix(rest, listPrefix) {
				keys = append(keys, rest)
			}
		}
		slices.Sort(keys)
		return json.Marshal(map[string]any{"keys": keys, "next_cursor": ""})
	}
	return nil, invalid("unknown op " + op)
}

var _ wasmrt.Broker = (*Broker)(nil)
