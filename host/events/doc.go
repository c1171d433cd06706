// Package events is the in-process event bus of a Palyra-Go host.
//
// The installer and the lifecycle operations publish an Event for every
// change a skill goes through (installed, enabled, disabled, quarantined,
// removed); the daemon's event stream, hooks and MCP's tool-list
// notifications subscribe to it. Event kinds use Palyra's hook event names
// where Palyra has one (skill:enabled, skill:quarantined, ...).
//
// The bus never blocks a publisher: each subscriber has a bounded buffer, and
// an event that does not fit is dropped for that subscriber and counted
// (Subscription.Dropped). Events are also journaled durably by the inventory
// (with the same ID), so a subscriber that fell behind catches up from the
// journal rather than slowing down installs. A Bus is safe for concurrent
// use; it spawns no goroutines.
package events
