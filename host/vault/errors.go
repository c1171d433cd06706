package vault

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels of the vault. Every error the package returns wraps one of them
// (and names the file, entry or source at fault), so callers use errors.Is
// and errcode.Of, never the text. No error ever carries a secret value or
// key material.
var (
	// ErrNotFound reports a name with no stored secret.
	ErrNotFound = errcode.New("secret_not_found", "secret not found")
	// ErrExists is Create of a name that holds a value already.
	ErrExists = errcode.New("secret_exists", "secret already exists")
	// ErrInvalidName reports a malformed "<scope>/<key>" name; the error is a
	// *NameError saying which part is at fault.
	ErrInvalidName = errcode.New("vault_invalid_name", "invalid secret name")
	// ErrValueTooLarge reports a value over MaxSecretBytes.
	ErrValueTooLarge = errcode.New("vault_value_too_large", "secret value too large")
	// ErrValueEmpty reports an empty value: the vault stores no empty secret.
	ErrValueEmpty = errcode.New("vault_value_empty", "secret value is empty")
	// ErrFull reports a Set that would take the vault past MaxEntries or
	// MaxVaultFileBytes.
	ErrFull = errcode.New("vault_full", "vault is full")
	// ErrFileTooLarge reports a vault.json over MaxVaultFileBytes.
	ErrFileTooLarge = errcode.New("vault_file_too_large", "vault file too large")
	// ErrCorrupt reports a vault.json that does not parse, or an entry that
	// fails authentication under a key that passed the key check (a
	// tampered or swapped ciphertext).
	ErrCorrupt = errcode.New("vault_corrupt", "vault file is corrupt")
	// ErrKeyMismatch reports a key that does not open the vault's key check:
	// the vault was sealed with another key.
	ErrKeyMismatch = errcode.New("vault_key_mismatch", "key does not match the vault")
	// ErrKeyInsecure reports a key file readable or writable by others than
	// its owner (mode wider than 0600), or one that is not a regular file.
	ErrKeyInsecure = errcode.New("vault_key_insecure", "vault key file is insecure")
	// ErrKeyInvalid reports key material that is not base64 of 32 bytes.
	ErrKeyInvalid = errcode.New("vault_key_invalid", "vault key is not 32 bytes of base64")
	// ErrKeyMissing reports a vault that holds sealed data while no key
	// source is configured and the key file does not exist: a new key would
	// not open it, so none is made.
	ErrKeyMissing = errcode.New("vault_key_missing", "no key for an existing vault")
	// ErrKeyCommand reports a Config.KeyCommand that failed, timed out or
	// printed too much.
	ErrKeyCommand = errcode.New("vault_key_command_failed", "vault key command failed")
	// ErrBusy reports a vault lock held by another writer for longer than
	// MaxLockWait.
	ErrBusy = errcode.New("vault_busy", "vault is locked by another writer")
	// ErrInvalidConfig reports a Config that Open cannot use.
	ErrInvalidConfig = errcode.New("vault_invalid_config", "invalid vault configuration")
)
