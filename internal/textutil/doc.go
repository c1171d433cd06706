// Package textutil bounds strings for messages without breaking UTF-8.
//
// Truncate cuts a string to at most n bytes on a rune boundary, so a
// multi-byte UTF-8 sequence is never split; TruncateValid first replaces
// invalid UTF-8 with U+FFFD, so its result is always valid UTF-8, as a
// protobuf string field requires; Ellipsize cuts a string that is over its
// limit and marks the cut.
//
// The package imports only unicode/utf8 and strings: it is linked into the
// sidecar and into skill modules built for wasip1.
package textutil
