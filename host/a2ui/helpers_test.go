package a2ui_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
)

// knownGood is Palyra's schemas/json/a2ui-placeholder-known-good.json.
const knownGood = "../../testdata/vectors/a2ui-placeholder-known-good.json"

// doc wraps component JSON texts in a document of surface "s".
func doc(components ...string) string {
	return `{"v":1,"surface":"s","components":[` + strings.Join(components, ",") + `]}`
}

// comp is a component JSON text.
func comp(id, typ, props string) string {
	return fmt.Sprintf(`{"id":%q,"type":%q,"props":%s}`, id, typ, props)
}

// form is a form component "f" with the given field JSON texts.
func form(fields ...string) string {
	return comp("f", "form", `{"fields":[`+strings.Join(fields, ",")+`]}`)
}

// repeat joins n copies of item(i) with commas.
func repeat(n int, item func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = item(i)
	}
	return strings.Join(parts, ",")
}

// want describes an expected error: the sentinel, the exact JSON Pointer,
// a fragment of the message and, for ErrLimit, the limit and size seen.
type want struct {
	err         error
	path        string
	msg         string
	limit, seen int
}

// checkErr checks err against w: an *Error with w's path and sentinel,
// wrapping the input's sentinel kind as well.
func checkErr(t *testing.T, err error, w want, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v at %q", w.err, w.path)
	}
	var e *a2ui.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *a2ui.Error", err, err)
	}
	if !errors.Is(err, w.err) || !errors.Is(err, kind) {
		t.Fatalf("error %v: want errors.Is %v and %v", err, w.err, kind)
	}
	if e.Path != w.path {
		t.Fatalf("error %v: path %q, want %q", err, e.Path, w.path)
	}
	if !strings.Contains(e.Msg, w.msg) {
		t.Fatalf("error %v: message does not contain %q", err, w.msg)
	}
	if w.err == a2ui.ErrLimit {
		if e.Limit != w.limit || e.Seen != w.seen {
			t.Fatalf("error %v: limit %d seen %d, want %d and %d", err, e.Limit, e.Seen, w.limit, w.seen)
		}
		if !strings.Contains(e.Msg, fmt.Sprint(w.limit)) || !strings.Contains(e.Msg, fmt.Sprint(w.seen)) {
			t.Fatalf("error %v does not name the limit and the size", err)
		}
	}
	if code := errcode.Of(err); code != w.err.(errcode.Coder).Code() {
		t.Fatalf("errcode.Of = %q, want %q", code, w.err.(errcode.Coder).Code())
	}
}
