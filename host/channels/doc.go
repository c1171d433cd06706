// Package channels delivers the messages skills send with the channel
// capability (sdk/ABI.md §5.4).
//
// A channel is a named destination an embedding application registers with
// the host library (any value implementing Channel) or that the daemon
// configures from a file (ParseConfig). A skill's manifest names the
// channels it sends to (capabilities.channels, a Palyra-Go extension), the
// operator's profile bounds them (policy channels.allowed), and the broker
// delivers a message only to a channel in the skill's grant that this
// registry knows; a granted channel that nobody registered is
// "unavailable", never silently dropped.
//
// Built-ins:
//   - Log writes each message to the host's structured log.
//   - Webhook POSTs each message as JSON to a configured URL through the
//     same egress firewall as skills' HTTP requests (the caller supplies
//     the Poster, so the host decides the rules).
//   - PubSub is an in-memory fan-out for tests and embedding apps.
//
// The sidecar never talks to a channel: it holds a handle, the broker on
// the trusted side resolves it here.
package channels
