package manifest

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2/unstable"
)

// This file places problems in the document, so that Parse reports them in
// the order they are written in skill.toml, each with its line and column.
// The index is built only when there is a problem to report.

// fieldError turns a pending problem into the exported error type.
func (p *pending) fieldError() *FieldError {
	return &FieldError{Path: p.path, Reason: p.reason, Err: p.err, Cause: p.cause}
}

// first returns the problem that comes first in data (by the offset of its
// field; a missing key counts as the end of its table; ties go to the one
// found first). With data nil it returns the first one found.
func first(errs []pending, data []byte) *FieldError {
	return placed(errs, data)[0]
}

// placed returns every problem as a FieldError in document order (by the
// offset of its field; a missing key counts as the end of its table; ties
// keep the order found), each with its line and column when data holds the
// field or one of its ancestors. With data nil the order is the order found
// and no position is set.
func placed(errs []pending, data []byte) []*FieldError {
	out := make([]*FieldError, len(errs))
	if data == nil {
		for i := range errs {
			out[i] = errs[i].fieldError()
		}
		return out
	}
	ix := buildIndex(data)
	offs := make([]int, len(errs))
	order := make([]int, len(errs))
	for i := range errs {
		offs[i] = ix.sortOffset(&errs[i])
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	for k, i := range order {
		fe := errs[i].fieldError()
		if off, ok := ix.locate(errs[i].path); ok {
			fe.Line, fe.Column = lineCol(data, off)
		}
		out[k] = fe
	}
	return out
}

// posIndex maps field paths, spelled as FieldError.Path, to the byte offset
// of their first mention in the document.
type posIndex struct {
	size int
	off  map[string]int
	end  map[string]int // path -> last offset within its subtree; built on demand
}

func (ix *posIndex) record(path string, off int) {
	if old, ok := ix.off[path]; !ok || off < old {
		ix.off[path] = off
	}
}

// buildIndex walks the TOML syntax tree. It never fails: on anything
// unexpected it stops and keeps what it has, since it only orders errors.
func buildIndex(data []byte) (ix *posIndex) {
	ix = &posIndex{size: len(data), off: map[string]int{}}
	defer func() { _ = recover() }()
	var p unstable.Parser
	p.Reset(data)
	current := ""
	arrays := map[string]int{} // array-of-tables path -> elements seen
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			path, headerOff := "", -1
			it := e.Key()
			for it.Next() {
				k := it.Node()
				if headerOff < 0 {
					headerOff = int(k.Raw.Offset)
				}
				path = joinKey(path, string(k.Data))
				ix.record(path, int(k.Raw.Offset))
				if n, ok := arrays[path]; ok && !(it.IsLast() && e.Kind == unstable.ArrayTable) {
					path = joinIndex(path, n-1)
				}
			}
			if e.Kind == unstable.ArrayTable {
				n := arrays[path]
				arrays[path] = n + 1
				path = joinIndex(path, n)
				ix.record(path, headerOff)
			}
			current = path
		case unstable.KeyValue:
			ix.keyValue(current, e)
		}
	}
	return ix
}

func (ix *posIndex) keyValue(base string, kv *unstable.Node) {
	path, off := base, 0
	it := kv.Key()
	for it.Next() {
		k := it.Node()
		off = int(k.Raw.Offset)
		path = joinKey(path, string(k.Data))
		ix.record(path, off)
	}
	ix.value(path, kv.Value(), off)
}

func (ix *posIndex) value(path string, v *unstable.Node, fallback int) {
	switch v.Kind {
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			c := it.Node()
			ep := joinIndex(path, i)
			off := nodeOffset(c, fallback)
			ix.record(ep, off)
			ix.value(ep, c, off)
			i++
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			ix.keyValue(path, it.Node())
		}
	}
}

// nodeOffset is where a value starts; containers without a raw range start
// at their first element.
func nodeOffset(n *unstable.Node, fallback int) int {
	if n.Raw.Length > 0 {
		return int(n.Raw.Offset)
	}
	if c := n.Child(); c != nil {
		return nodeOffset(c, fallback)
	}
	return fallback
}

// locate returns the offset of path, or of its nearest ancestor in the
// document.
func (ix *posIndex) locate(path string) (int, bool) {
	for p := path; p != ""; p = parentPath(p) {
		if off, ok := ix.off[p]; ok {
			return off, true
		}
	}
	return 0, false
}

// sortOffset orders problems: a field by where it is written; a missing key
// by the end of the table that lacks it (serde reports missing fields once
// the table has been read).
func (ix *posIndex) sortOffset(e *pending) int {
	if !e.missing {
		off, _ := ix.locate(e.path)
		return off
	}
	table := parentPath(e.path)
	for table != "" {
		if _, ok := ix.off[table]; ok {
			break
		}
		table = parentPath(table)
	}
	if table == "" {
		return ix.size
	}
	if ix.end == nil {
		ix.buildEnds()
	}
	return ix.end[table] + 1
}

// buildEnds records, for every path, the last offset found in its subtree.
// Done once, so many missing keys cost linear time, not quadratic.
func (ix *posIndex) buildEnds() {
	ix.end = make(map[string]int, len(ix.off))
	for p, off := range ix.off {
		for a := p; a != ""; a = parentPath(a) {
			if e, ok := ix.end[a]; ok && e >= off {
				break // and so are the ends of a's ancestors
			}
			ix.end[a] = off
		}
	}
}

// parentPath drops the last key or index of a field path, skipping quoted
// keys, which may contain '.' and '['.
func parentPath(path string) string {
	last, quoted := 0, false
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '.' || c == '['):
			last = i
		}
	}
	return path[:last]
}

// lineCol converts a byte offset into a 1-based line and column (in runes).
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return bytes.Count(data[:off], []byte{'\n'}) + 1, utf8.RuneCount(data[start:off]) + 1
}
