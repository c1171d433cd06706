//go:build palyra_sdk_json_envelope

package skill

// jsonEnvelope is true in builds with the palyra_sdk_json_envelope tag:
// the SDK as it was before the change profiled by palyra-bench (scenario
// A), decoding the input document with encoding/json and warming nothing.
// palyra-bench builds the echo example both ways to measure the change in
// one run; nothing else should use the tag.
const jsonEnvelope = true
