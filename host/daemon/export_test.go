package daemon

import "net/http"

// Handler is the daemon's HTTP handler, for the fuzz target that drives
// it in process.
func (d *Daemon) Handler() http.Handler { return d.handler() }
