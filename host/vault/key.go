package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// Key source limits.
const (
	// KeyCommandTimeout bounds one run of the key command.
	KeyCommandTimeout = 10 * time.Second
	// MaxKeyCommandOutputBytes caps the key command's standard output.
	MaxKeyCommandOutputBytes = 4 << 10
	// MaxKeyFileBytes caps the key file.
	MaxKeyFileBytes = 4 << 10
)

// keyCommandStderrBytes is how much of the key command's standard error is
// kept; at most keySnippetBytes of it, redacted, reach an error.
const (
	keyCommandStderrBytes = 4 << 10
	keySnippetBytes       = 80
	keyCommandWaitDelay   = time.Second
)

// Names of the key sources in errors: the Config field, and the variable
// palyra and palyra-host fill it from, so that both an embedding
// application and an operator know what to fix.
const (
	srcEncodedKey = "Config.EncodedKey ($PALYRA_VAULT_KEY)"
	srcKeyCommand = "Config.KeyCommand ($PALYRA_VAULT_KEY_COMMAND)"
)

// keySource names the key source the Vault uses, for errors.
func (v *Vault) keySource() string {
	switch {
	case v.cfgKey != nil:
		return "Config.Key"
	case v.encodedKey != "":
		return srcEncodedKey
	case v.keyCommand != "":
		return srcKeyCommand
	}
	return "the key file " + v.KeyPath()
}

// key returns the vault key from the first configured source: Config.Key,
// Config.EncodedKey, Config.KeyCommand, else the key file. When
// create is set, the source is the key file and the file does not exist, a
// new random key is written to it (mode 0600). A key once resolved is kept
// for the Vault's life.
func (v *Vault) key(ctx context.Context, create bool) ([]byte, error) {
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	if v.cachedKey != nil {
		return v.cachedKey, nil
	}
	var (
		k   []byte
		err error
	)
	switch {
	case v.cfgKey != nil:
		k = v.cfgKey
	case v.encodedKey != "":
		k, err = decodeKey([]byte(v.encodedKey), srcEncodedKey)
	case v.keyCommand != "":
		k, err = runKeyCommand(ctx, v.keyCommand)
	default:
		k, err = v.keyFromFile(create)
	}
	if err != nil {
		return nil, err
	}
	v.cachedKey = k
	return k, nil
}

// decodeKey decodes base64 key material (surrounding white space allowed).
// The error names the source, never the material.
func decodeKey(text []byte, source string) ([]byte, error) {
	t := bytes.TrimSpace(text)
	k := make([]byte, base64.StdEncoding.DecodedLen(len(t)))
	n, err := base64.StdEncoding.Decode(k, t)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not valid base64 (%d bytes of text)", ErrKeyInvalid, source, len(t))
	}
	if n != KeyBytes {
		return nil, fmt.Errorf("%w: %s decodes to %d bytes, want %d", ErrKeyInvalid, source, n, KeyBytes)
	}
	return k[:n], nil
}

// keyFromFile reads the key file, refusing one whose mode is wider than
// 0600, and creates it when asked to and it does not exist.
func (v *Vault) keyFromFile(create bool) ([]byte, error) {
	path := v.KeyPath()
	k, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if !create {
		return nil, fmt.Errorf("%w: the vault holds sealed data, no key source is configured (%s, %s) and the key file %s does not exist", ErrKeyMissing, srcEncodedKey, srcKeyCommand, path)
	}
	k = make([]byte, KeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("vault: generate key: %w", err)
	}
	text := base64.StdEncoding.EncodeToString(k) + "\n"
	if err := fsutil.WriteExclusive(path, []byte(text), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Made meanwhile by a writer that does not take the vault
			// lock: use that key rather than replace it.
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("vault: create key file: %w", err)
	}
	return k, nil
}

// readKeyFile reads and decodes the key file. A missing file is an error
// wrapping fs.ErrNotExist.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("vault: open key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("vault: stat key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (mode %s)", ErrKeyInsecure, path, st.Mode())
	}
	if perm := st.Mode().Perm(); perm&^0o600 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, wider than 0600 (run chmod 600 %s)", ErrKeyInsecure, path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("vault: read key file: %w", err)
	}
	if len(data) > MaxKeyFileBytes {
		return nil, fmt.Errorf("%w: %s is over the %d-byte limit (read %d bytes before stopping)", ErrKeyInvalid, path, MaxKeyFileBytes, len(data))
	}
	defer clear(data)
	return decodeKey(data, "key file "+path)
}

// runKeyCommand runs cmdText with /bin/sh -c, bounded by ctx and
// KeyCommandTimeout, and decodes its standard output as the key. Neither
// the command text (it may embed the key) nor its output reaches an error;
// of its standard error only a short redacted snippet does.
func runKeyCommand(ctx context.Context, cmdText string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, KeyCommandTimeout)
	defer cancel()
	stdout := &capWriter{limit: MaxKeyCommandOutputBytes}
	stderr := &capWriter{limit: keyCommandStderrBytes}
	defer clear(stdout.buf)
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cmdText)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = keyCommandWaitDelay
	isolate(cmd)
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("%w: %s did not finish within %v or before the caller gave up: %w", ErrKeyCommand, srcKeyCommand, KeyCommandTimeout, ctxErr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s failed: %v%s", ErrKeyCommand, srcKeyCommand, exitReason(err), stderrNote(stderr.buf))
	}
	if stdout.over {
		return nil, fmt.Errorf("%w: %s printed %d bytes on stdout, over the %d-byte limit", ErrKeyCommand, srcKeyCommand, stdout.total, MaxKeyCommandOutputBytes)
	}
	return decodeKey(stdout.buf, "the output of "+srcKeyCommand)
}

// exitReason describes how the command failed without its output.
func exitReason(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

// longRun matches runs of characters that could be key material (base64,
// base64url or hex) long enough to carry a useful part of a key.
var longRun = regexp.MustCompile(`[A-Za-z0-9+/=_-]{16,}`)

// stderrNote returns "; stderr: <snippet>" for an error message, or "" when
// stderr is empty. The snippet is the first line, cut to keySnippetBytes,
// with every run of 16 or more base64 or hex characters replaced by
// "[redacted]", so no useful part of a key printed there can show.
func stderrNote(stderr []byte) string {
	line, _, _ := strings.Cut(string(stderr), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return ""
	}
	line = longRun.ReplaceAllString(line, "[redacted]")
	line = cut(line, keySnippetBytes)
	return fmt.Sprintf("; stderr: %q", line)
}

// capWriter keeps the first limit bytes written to it and counts the rest,
// so a chatty command never blocks on a full pipe nor fills memory.
type capWriter struct {
	limit int
	buf   []byte
	total int
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.total += len(p)
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	if w.total > w.limit {
		w.over = true
	}
	return len(p), nil
}
