// Package console serves palyra-host's web console: a single-page app
// (TypeScript + React, built with Vite) whose built files are committed
// under dist/ and embedded in the binary, so running the daemon needs no
// Node.js.
//
// # Its part in the whole
//
// The daemon mounts Handler at "/" for every path its API does not own
// (/v1/, /admin/, /mcp, /metrics, /healthz, /readyz). The console's files
// are public; every API call the console makes carries the admin token the
// operator typed on its login screen, so the handler itself needs no
// authentication.
//
//	mux.Handle("/", console.Handler())
//
// # What it serves
//
// A GET or HEAD of a file in dist is that file; any other GET or HEAD path
// (a console route such as /skills/palyra.echo) is index.html, so deep
// links and reloads work; other methods get 405. Every response has a
// strict Content-Security-Policy (no inline script or style, no other
// origin: the console makes no external request), nosniff,
// no-referrer and frame denial. Files under /assets/ have content-hashed
// names and are cached for a year as immutable; index.html is revalidated
// on every load, so a new daemon's console is picked up at once.
//
// # Building the front end
//
// The source is under this directory (src/, index.html, vite.config.ts).
// From here:
//
//	npm ci && npm run build   # writes dist/ (reproducible: same bytes every time)
//	npm test                  # unit tests (Vitest)
//	npm run e2e               # Playwright against a running daemon, axe-core on every page, screenshots at 420 and 1400 px; see scripts/console-e2e.sh
//
// The package has no state and starts no goroutines.
package console
