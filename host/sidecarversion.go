package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// ErrSidecarMismatch is a palyra-sidecar binary that does not answer as
// this host's sidecar must: it does not know the version command (an
// older build), or it speaks another skills ABI or sidecar protocol.
var ErrSidecarMismatch = errcode.New("sidecar_mismatch", "the palyra-sidecar binary does not match this host")

// sidecarVersionTimeout bounds `palyra-sidecar version`, which only
// prints; a sidecar that takes longer is broken.
const sidecarVersionTimeout = 10 * time.Second

// maxSidecarVersionBytes caps what the version command may print.
const maxSidecarVersionBytes = 64 << 10

// SidecarVersion runs `palyra-sidecar version --json` (path, as
// FindSidecar returns it) and returns what the binary says it is, with
// the kernel's support for its hardening (Info.Kernel). The child gets
// an empty environment and reads no module. A binary that cannot run is
// supervisor.ErrSidecarNotFound's business (the caller found it); one
// that does not answer properly is ErrSidecarMismatch. It does not judge
// compatibility: compare with buildinfo.Info.Compatible.
func SidecarVersion(ctx context.Context, path string) (*buildinfo.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, sidecarVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "--json")
	cmd.Env = []string{}
	cmd.WaitDelay = time.Second
	var out, errb limitedBuffer
	out.limit, errb.limit = maxSidecarVersionBytes, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s version: %w", ErrSidecarMismatch, path, ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%w: %s version exited with %d (%s): an older build without the version command? rebuild it with this host",
				ErrSidecarMismatch, path, ee.ExitCode(), firstLine(errb.String()))
		}
		return nil, fmt.Errorf("%w: run %s: %v", ErrSidecarMismatch, path, err)
	}
	var in buildinfo.Info
	if err := json.Unmarshal(out.Bytes(), &in); err != nil || in.ABI == "" || in.Kernel == nil {
		return nil, fmt.Errorf("%w: %s version --json printed no build information (%q)", ErrSidecarMismatch, path, firstLine(out.String()))
	}
	return &in, nil
}

// firstLine is the first line of s, trimmed and cut at 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// limitedBuffer keeps the first limit bytes written to it and drops the
// rest (the child still runs to its end).
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
