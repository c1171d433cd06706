package console

import (
	"bytes"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var distFS embed.FS

// ContentSecurityPolicy is the Content-Security-Policy of every response:
// only the console's own origin, no inline script or style, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Cache-Control values: hashed assets never change; index.html is
// revalidated on every load.
const (
	CacheImmutable = "public, max-age=31536000, immutable"
	CacheNoCache   = "no-cache"
)

// Handler returns the console's handler: the embedded files, index.html
// for any other GET or HEAD path, 405 for other methods. It is safe for
// concurrent use.
func Handler() http.Handler {
	sub, err := fs.Sub(distFS, "dist")
	if err != nil {
		panic("console: embedded dist is missing: " + err.Error()) // a build defect, not a runtime condition
	}
	return newHandler(sub)
}

// handler serves the files of root.
type handler struct {
	root  fs.FS
	index []byte
}

func newHandler(root fs.FS) *handler {
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		index = []byte("<!doctype html><title>palyra-host console</title><p>The console was not built into this binary.</p>")
	}
	return &handler{root: root, index: index}
}

// modTime is the Last-Modified of embedded files: embed has none, and a
// zero time makes http.ServeContent send no Last-Modified at all.
var modTime time.Time

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" && fs.ValidPath(name) {
		if data, err := fs.ReadFile(h.root, name); err == nil {
			if strings.HasPrefix(name, "assets/") {
				hd.Set("Cache-Control", CacheImmutable)
			} else {
				hd.Set("Cache-Control", CacheNoCache)
			}
			hd.Set("Content-Type", contentType(name))
			http.ServeContent(w, r, name, modTime, bytes.NewReader(data))
			return
		}
	}
	if name == "assets" || strings.HasPrefix(name, "assets/") {
		// A hashed file this build does not have (a page of an older
		// build asking for its script) is a 404, not the app's HTML.
		hd.Set("Cache-Control", CacheNoCache)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	// The console's own routes (and the root) are the app.
	hd.Set("Cache-Control", CacheNoCache)
	hd.Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "index.html", modTime, bytes.NewReader(h.index))
}

// contentType is the type of a file by its extension, with the console's
// own types fixed so they do not depend on the system's mime tables.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".woff2":
		return "font/woff2"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}
