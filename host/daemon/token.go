package daemon

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// Token errors.
var (
	// ErrUnauthorized is a request without the admin token, with a wrong
	// one, or with the token anywhere but `Authorization: Bearer`.
	ErrUnauthorized = errcode.New("unauthorized", "missing or invalid admin token")
	// ErrTokenFile is an admin token file that cannot be used (unreadable,
	// malformed, or readable by others than its owner).
	ErrTokenFile = errcode.New("admin_token_file_invalid", "the admin token file cannot be used")
)

// tokenPrefix starts every admin token, so that secret scanners and humans
// recognise one.
const tokenPrefix = "palyra_"

// maxTokenFileBytes caps the token file.
const maxTokenFileBytes = 1 << 10

// TokenPath is the admin token file of a state directory:
// <state>/daemon/admin-token (statedir.Layout.DaemonToken; mode 0600 in a
// 0700 directory).
func TokenPath(stateDir string) string {
	return statedir.At(stateDir).DaemonToken()
}

// newToken returns a fresh token: the prefix and 32 random bytes.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// EnsureToken creates the admin token of stateDir when there is none and
// reports whether it did. An existing token file is checked (ReadToken).
func EnsureToken(stateDir string) (created bool, err error) {
	p := TokenPath(stateDir)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return false, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	tok, err := newToken()
	if err != nil {
		return false, err
	}
	err = fsutil.WriteExclusive(p, []byte(tok+"\n"), 0o600)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	_, err = ReadToken(p)
	return false, err
}

// RotateToken replaces the admin token of stateDir with a new one (written
// atomically) and returns it. A running daemon accepts only the new token
// from its next request on.
func RotateToken(stateDir string) (string, error) {
	p := TokenPath(stateDir)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	if err := fsutil.WriteAtomic(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	return tok, nil
}

// ReadToken reads a token file. A file that others than its owner can read
// or write, that is empty or not one line of a token is refused.
func ReadToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: %s has mode %#o; it must be readable by its owner only (chmod 600)", ErrTokenFile, path, st.Mode().Perm())
	}
	if st.Size() > maxTokenFileBytes {
		return "", fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrTokenFile, path, st.Size(), maxTokenFileBytes)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && st.Size() > 0 {
		return "", fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	tok := strings.TrimSpace(string(buf))
	if len(tok) < 32 || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%w: %s does not hold one token of at least 32 characters", ErrTokenFile, path)
	}
	return tok, nil
}

// Authenticator checks bearer tokens against the token file. It re-reads
// the file when it changes (size, modification time or inode), at most once
// per request, so `palyra-host token rotate` takes effect without a restart.
// A token file that cannot be read denies every request (fail closed).
type Authenticator struct {
	path string

	mu    sync.Mutex
	token []byte
	stamp fileStamp
}

type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// NewAuthenticator returns an Authenticator for the token file at path and
// checks that the file is usable now.
func NewAuthenticator(path string) (*Authenticator, error) {
	a := &Authenticator{path: path}
	if _, err := a.current(); err != nil {
		return nil, err
	}
	return a, nil
}

// current returns the token, re-reading the file when it changed.
func (a *Authenticator) current() ([]byte, error) {
	st, err := os.Stat(a.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenFile, err)
	}
	stamp := fileStamp{size: st.Size(), mtime: st.ModTime()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		stamp.ino = uint64(sys.Ino)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != nil && stamp == a.stamp {
		return a.token, nil
	}
	tok, err := ReadToken(a.path)
	if err != nil {
		a.token = nil
		return nil, err
	}
	a.token, a.stamp = []byte(tok), stamp
	return a.token, nil
}

// CheckAuthorization checks the value of an Authorization header (or gRPC
// `authorization` metadata): it must be "Bearer <token>" with the current
// token, compared in constant time.
func (a *Authenticator) CheckAuthorization(value string) error {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		if value == "" {
			return fmt.Errorf("%w: no Authorization: Bearer header", ErrUnauthorized)
		}
		return fmt.Errorf("%w: the Authorization header is not \"Bearer <token>\"", ErrUnauthorized)
	}
	want, err := a.current()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), want) != 1 {
		return fmt.Errorf("%w: wrong token", ErrUnauthorized)
	}
	return nil
}
