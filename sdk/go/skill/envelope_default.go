//go:build !palyra_sdk_json_envelope

package skill

// jsonEnvelope is false: the input document is decoded by hand and Typed
// warms its codecs at registration (see envelope.go).
const jsonEnvelope = false
