package registry

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/internal/testtls"
)

// site is an HTTPS server on 127.0.0.1 with its own CA serving fixed
// bodies by path (set after it starts, since bodies name its URL) and
// handlers by path.
type site struct {
	srv   *httptest.Server
	ca    *testtls.CA
	mu    sync.Mutex
	files map[string][]byte
	funcs map[string]http.HandlerFunc
}

func newSite(t *testing.T) *site {
	s := &site{files: map[string][]byte{}, funcs: map[string]http.HandlerFunc{}}
	s.srv, s.ca = testtls.Serve(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.files[r.URL.Path]
		fn := s.funcs[r.URL.Path]
		s.mu.Unlock()
		switch {
		case fn != nil:
			fn(w, r)
		case ok:
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	return s
}

func (s *site) put(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

func (s *site) handle(path string, fn http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.funcs[path] = fn
}

// page signs entries (and next) as one page by hub with key.
func page(t testing.TB, key ed25519.PrivateKey, entries []Entry, next string) []byte {
	t.Helper()
	idx := Index{SchemaVersion: 1, GeneratedAtUnixMS: buildTime.UnixMilli(), Entries: entries}
	if entries == nil {
		idx.Entries = []Entry{}
	}
	if next != "" {
		idx.NextPage = &next
	}
	doc := &Document{SchemaVersion: 1, Index: idx, Signature: Sign(&idx, key, "hub", buildTime)}
	b, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entryFor is the entry of data at artifact path or URL a.
func entryFor(id, version, a string, data []byte) Entry {
	sum := sha256.Sum256(data)
	return Entry{SkillID: id, Version: version, Publisher: "acme", Artifact: a, ArtifactSHA256: hex.EncodeToString(sum[:])}
}

func (s *site) client(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(ClientConfig{CACertPEM: s.ca.PEM})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var hub = testskill.Key(7)

// TestServedIndex: an index built over a directory and served over HTTPS
// (a CA of the test's own, trusted through the PEM or the root pool) is
// read and its artifacts downloaded; pages are followed, with relative
// and absolute next_page and artifact URLs.
func TestServedIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	art := skillBytes(t, "acme.echo", "1.0.0", "", testskill.Key(1))
	writeFile(t, dir, "skills/echo.palyra-skill", art)
	b, err := Build(dir, hub, "hub", buildTime)
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t)
	s.srv.Config.Handler = http.FileServer(http.Dir(dir))
	if _, err := WriteIndex(dir, b.Bytes); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []ClientConfig{{CACertPEM: s.ca.PEM}, {RootCAs: s.ca.Pool()}} {
		c, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := c.Index(ctx, s.srv.URL+"/index.json", trustingKey(t, "hub", hub), false)
		if err != nil {
			t.Fatalf("Index: %v", err)
		}
		e, ok := cat.Find("acme.echo", "1.0.0")
		if !ok || cat.Local || cat.Publisher != "hub" || cat.TrustDecision != "allowlisted" {
			t.Fatalf("catalog = %+v", cat)
		}
		got, err := c.Artifact(ctx, cat, e)
		if err != nil || !slices.Equal(got, art) {
			t.Fatalf("Artifact: %v", err)
		}
	}

	// Three pages: relative, absolute and path-absolute next_page; the
	// artifacts resolved against the page that lists them.
	s2 := newSite(t)
	a1 := skillBytes(t, "acme.one", "1.0.0", "", testskill.Key(1))
	a2 := skillBytes(t, "acme.two", "1.0.0", "", testskill.Key(1))
	s2.put("/v1/index.json", page(t, hub, []Entry{entryFor("acme.one", "1.0.0", "files/one.palyra-skill", a1)}, "p/2.json"))
	s2.put("/v1/p/2.json", page(t, hub, []Entry{entryFor("acme.two", "1.0.0", s2.srv.URL+"/blobs/two", a2)}, "/v1/p/3.json?x=1&y=<2>"))
	s2.put("/v1/p/3.json", page(t, hub, nil, ""))
	s2.put("/v1/files/one.palyra-skill", a1)
	s2.put("/blobs/two", a2)
	c := s2.client(t)
	cat, err := c.Index(ctx, s2.srv.URL+"/v1/index.json", trustingKey(t, "hub", hub), false)
	if err != nil {
		t.Fatalf("Index over pages: %v", err)
	}
	for id, want := range map[string][]byte{"acme.one": a1, "acme.two": a2} {
		e, ok := cat.Latest(id)
		if !ok {
			t.Fatalf("%s not found", id)
		}
		got, err := c.Artifact(ctx, cat, e)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Artifact %s: %v", id, err)
		}
	}
}

// TestServedIndexRefusals: every limit and origin rule of a served index,
// each with its code.
func TestServedIndexRefusals(t *testing.T) {
	ctx := context.Background()
	// hub's two keys are allowlisted, so that a page signed by the second
	// is refused for not being the first page's key.
	store := trust.NewStore()
	for _, k := range []ed25519.PrivateKey{hub, testskill.Key(9)} {
		if err := store.AddTrusted("hub", hexKey(k)); err != nil {
			t.Fatal(err)
		}
	}
	allow := storeTrust(store)
	art := skillBytes(t, "acme.echo", "1.0.0", "", testskill.Key(1))
	other := newSite(t) // another origin
	other.put("/a.palyra-skill", art)

	cases := []struct {
		name  string
		setup func(s *site) string // returns the index path
		// download is set when the refusal comes at the artifact.
		download bool
		want     *errcode.Sentinel
	}{
		{"cross-origin artifact", func(s *site) string {
			s.put("/index.json", page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", other.srv.URL+"/a.palyra-skill", art)}, ""))
			return "/index.json"
		}, true, ErrCrossOrigin},
		{"cross-origin artifact by host name", func(s *site) string {
			u := strings.Replace(s.srv.URL, "127.0.0.1", "localhost", 1)
			s.put("/a.palyra-skill", art)
			s.put("/index.json", page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", u+"/a.palyra-skill", art)}, ""))
			return "/index.json"
		}, true, ErrCrossOrigin},
		{"http artifact", func(s *site) string {
			u := strings.Replace(s.srv.URL, "https://", "http://", 1)
			s.put("/index.json", page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", u+"/a.palyra-skill", art)}, ""))
			return "/index.json"
		}, true, ErrCrossOrigin},
		{"cross-origin next_page", func(s *site) string {
			other.put("/2.json", page(t, hub, nil, ""))
			s.put("/index.json", page(t, hub, nil, other.srv.URL+"/2.json"))
			return "/index.json"
		}, false, ErrCrossOrigin},
		{"redirect off origin", func(s *site) string {
			s.handle("/index.json", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.srv.URL+"/2.json", http.StatusFound)
			})
			return "/index.json"
		}, false, ErrCrossOrigin},
		{"oversized page", func(s *site) string {
			s.put("/index.json", append(page(t, hub, nil, ""), make([]byte, MaxIndexPageBytes)...))
			return "/index.json"
		}, false, ErrPageTooLarge},
		{"oversized page, streamed without length", func(s *site) string {
			s.handle("/index.json", func(w http.ResponseWriter, _ *http.Request) {
				chunk := make([]byte, 64<<10)
				for i := 0; i < MaxIndexPageBytes/len(chunk)+2; i++ {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			})
			return "/index.json"
		}, false, ErrPageTooLarge},
		{"too many entries over pages", func(s *site) string {
			var p1, p2 []Entry
			for i := 0; i < MaxEntries/2+1; i++ {
				p1 = append(p1, Entry{SkillID: "s", Version: fmt.Sprintf("1.0.%d", i), Publisher: "p", Artifact: "a", ArtifactSHA256: strings.Repeat("0", 64)})
				p2 = append(p2, Entry{SkillID: "s", Version: fmt.Sprintf("2.0.%d", i), Publisher: "p", Artifact: "a", ArtifactSHA256: strings.Repeat("0", 64)})
			}
			s.put("/index.json", compactPage(t, p1, "2.json"))
			s.put("/2.json", compactPage(t, p2, ""))
			return "/index.json"
		}, false, ErrTooManyEntries},
		{"too many pages", func(s *site) string {
			for i := 1; i <= MaxPages+1; i++ {
				s.put(fmt.Sprintf("/%d.json", i), page(t, hub, nil, fmt.Sprintf("%d.json", i+1)))
			}
			return "/1.json"
		}, false, ErrTooManyPages},
		{"page loop", func(s *site) string {
			s.put("/1.json", page(t, hub, nil, "2.json"))
			s.put("/2.json", page(t, hub, nil, "./1.json#again"))
			return "/1.json"
		}, false, ErrPageLoop},
		{"duplicate across pages", func(s *site) string {
			e := entryFor("acme.echo", "1.0.0", "a", art)
			s.put("/1.json", page(t, hub, []Entry{e}, "2.json"))
			s.put("/2.json", page(t, hub, []Entry{e}, ""))
			return "/1.json"
		}, false, ErrDuplicateEntry},
		{"page signed by another key", func(s *site) string {
			s.put("/1.json", page(t, hub, nil, "2.json"))
			s.put("/2.json", page(t, testskill.Key(9), nil, ""))
			return "/1.json"
		}, false, ErrSignatureInvalid},
		{"tampered page", func(s *site) string {
			b := page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", "a.palyra-skill", art)}, "")
			s.put("/index.json", []byte(strings.Replace(string(b), "a.palyra-skill", "b.palyra-skill", 1)))
			return "/index.json"
		}, false, ErrSignatureInvalid},
		{"not found", func(s *site) string { return "/missing.json" }, false, ErrFetch},
		{"sha mismatch", func(s *site) string {
			s.put("/a.palyra-skill", append(append([]byte{}, art...), 0))
			s.put("/index.json", page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", "a.palyra-skill", art)}, ""))
			return "/index.json"
		}, true, ErrSHA256Mismatch},
		{"download over the limit", func(s *site) string {
			s.handle("/big.palyra-skill", func(w http.ResponseWriter, _ *http.Request) {
				chunk := make([]byte, 1<<20)
				for i := 0; i < MaxArtifactDownloadBytes/len(chunk)+2; i++ {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			})
			s.put("/index.json", page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", "big.palyra-skill", art)}, ""))
			return "/index.json"
		}, true, ErrArtifactTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSite(t)
			path := c.setup(s)
			cl := s.client(t)
			cat, err := cl.Index(ctx, s.srv.URL+path, allow, false)
			if c.download {
				if err != nil {
					t.Fatalf("Index: %v", err)
				}
				_, err = cl.Artifact(ctx, cat, &cat.Entries[0])
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %s", err, c.want.Code())
			}
		})
	}

	t.Run("http URL", func(t *testing.T) {
		s := newSite(t)
		s.put("/index.json", page(t, hub, nil, ""))
		_, err := s.client(t).Index(ctx, strings.Replace(s.srv.URL, "https://", "http://", 1)+"/index.json", allow, false)
		if !errors.Is(err, ErrInsecureURL) {
			t.Fatalf("err = %v, want %s", err, ErrInsecureURL.Code())
		}
	})
	t.Run("server of an untrusted CA", func(t *testing.T) {
		s := newSite(t)
		s.put("/index.json", page(t, hub, nil, ""))
		c, err := NewClient(ClientConfig{CACertPEM: testtls.NewCA(t).PEM})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Index(ctx, s.srv.URL+"/index.json", allow, false); !errors.Is(err, ErrFetch) {
			t.Fatalf("err = %v, want %s", err, ErrFetch.Code())
		}
	})
	t.Run("untrusted index key", func(t *testing.T) {
		s := newSite(t)
		s.put("/index.json", page(t, hub, nil, ""))
		_, err := s.client(t).Index(ctx, s.srv.URL+"/index.json", trustingKey(t, "other", hub), false)
		if errcode.Of(err) != "untrusted_publisher" {
			t.Fatalf("err = %v, want untrusted_publisher", err)
		}
	})
}

// compactPage is page without indentation.
func compactPage(t testing.TB, entries []Entry, next string) []byte {
	t.Helper()
	idx := Index{SchemaVersion: 1, GeneratedAtUnixMS: 1, Entries: entries}
	if next != "" {
		idx.NextPage = &next
	}
	return compactDoc(t, idx)
}

// TestLocalArtifactPaths: a registry directory's artifact path must stay
// inside it: "..", an absolute path and a symbolic link out are refused.
func TestLocalArtifactPaths(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	art := skillBytes(t, "acme.echo", "1.0.0", "", testskill.Key(1))
	writeFile(t, outside, "a.palyra-skill", art)
	for _, c := range []struct {
		name, artifact string
		link           bool
	}{
		{"dot-dot", "../" + filepath.Base(outside) + "/a.palyra-skill", false},
		{"nested dot-dot", "x/../../a.palyra-skill", false},
		{"absolute", filepath.Join(outside, "a.palyra-skill"), false},
		{"symlink out", "link.palyra-skill", true},
		{"symlinked dir out", "ldir/a.palyra-skill", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "reg")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.link {
				if err := os.Symlink(filepath.Join(outside, "a.palyra-skill"), filepath.Join(dir, "link.palyra-skill")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(dir, "ldir")); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, dir, IndexFile, page(t, hub, []Entry{entryFor("acme.echo", "1.0.0", c.artifact, art)}, ""))
			cat, err := ReadDir(ctx, dir, trustingKey(t, "hub", hub), false)
			if err != nil {
				t.Fatal(err)
			}
			c2, _ := NewClient(ClientConfig{})
			if _, err := c2.Artifact(ctx, cat, &cat.Entries[0]); !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("err = %v, want %s", err, ErrUnsafePath.Code())
			}
		})
	}
	t.Run("next_page in a directory", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, IndexFile, page(t, hub, nil, "2.json"))
		if _, err := ReadDir(ctx, dir, trustingKey(t, "hub", hub), false); !errors.Is(err, ErrInvalidIndex) {
			t.Fatalf("err = %v, want %s", err, ErrInvalidIndex.Code())
		}
	})
}

// TestRequestTimeout: a server that does not answer within the client's
// timeout fails the request (registry_fetch_failed); the handler returns
// as soon as the client gives up.
func TestRequestTimeout(t *testing.T) {
	s := newSite(t)
	s.handle("/index.json", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c, err := NewClient(ClientConfig{CACertPEM: s.ca.PEM, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Index(context.Background(), s.srv.URL+"/index.json", trustingKey(t, "hub", hub), false); !errors.Is(err, ErrFetch) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want %s from the deadline", err, ErrFetch.Code())
	}
	if _, err := NewClient(ClientConfig{CACertPEM: []byte("not PEM")}); !errors.Is(err, ErrFetch) {
		t.Fatalf("bad PEM: %v", err)
	}
}
