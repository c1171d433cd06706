package ociregistry

import (
	"net/http"
	"os"
	"strconv"
	"testing"
)

// TestStartAndClose starts the registry in each mode, checks /v2/ answers
// as the mode says (401 without credentials when auth is on, 200 with
// them), and that Close leaves no process and no directory.
func TestStartAndClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"tls", Options{TLS: true}},
		{"auth", Options{Username: "alice", Password: "s3cret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Start(t, tc.opts)
			c := r.Client()
			defer c.CloseIdleConnections()
			get := func(user, pass string) int {
				req, err := http.NewRequest(http.MethodGet, r.URL()+"/v2/", nil)
				if err != nil {
					t.Fatal(err)
				}
				if user != "" {
					req.SetBasicAuth(user, pass)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			want := http.StatusOK
			if tc.opts.Username != "" {
				want = http.StatusUnauthorized
				if got := get(tc.opts.Username, tc.opts.Password); got != http.StatusOK {
					t.Fatalf("with credentials: %d, want 200", got)
				}
				if got := get(tc.opts.Username, "wrong"); got != http.StatusUnauthorized {
					t.Fatalf("wrong password: %d, want 401", got)
				}
			}
			if got := get("", ""); got != want {
				t.Fatalf("anonymous: %d, want %d", got, want)
			}
			if tc.opts.TLS && r.URL()[:8] != "https://" {
				t.Fatalf("URL %s is not https", r.URL())
			}
			pid, dir := r.cmd.Process.Pid, r.dir
			r.Close()
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("directory %s left behind: %v", dir, err)
			}
			if _, err := os.Stat("/proc/" + itoa(pid)); !os.IsNotExist(err) {
				t.Fatalf("process %d left behind", pid)
			}
		})
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
