package host

// SetBeforeSidecar makes every call of h run fn between its checks and its
// sidecar call, so a test can change the world at that point.
func SetBeforeSidecar(h *Host, fn func()) { h.beforeSidecar = fn }
