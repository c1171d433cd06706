// Package vault is the supervisor's encrypted store of secret values: the
// API tokens and passwords that skills use by handle but never see.
//
// A skill manifest grants secrets by name ("skill:acme.echo_http/api_token",
// manifest.CapabilityGrants().SecretKeys); the operator stores the values
// here (`palyra secrets set`), and the capability broker reads one with Get
// when a guest asks for it to be injected into an outgoing request (ABI
// §5.1 secret_headers). Install uses Has to report missing secrets without
// needing the key. No value ever crosses into a sidecar.
//
// Besides the skills' secrets, the vault holds publishers' Ed25519 signing
// seeds (`palyra keys generate --vault-ref signing/<key>`, read by
// --signing-key-vault-ref) in SigningScope, a scope no skill manifest can
// name, so none is ever granted to a skill. Create stores a value only
// where none is (checked under the writers' lock), so a signing key is
// never replaced by accident. A cluster node replicates signing entries
// like every other (sealed, see Replication).
//
// # Files
//
// The vault lives in <state>/secrets (mode 0700; the paths are
// host/statedir's Layout.SecretsDir, VaultFile, VaultKey and VaultLock):
//
//	vault.json  the sealed entries (mode 0600)
//	vault.key   the key, base64 of 32 random bytes (mode 0600), made by the
//	            first Set when no other key source is configured
//	vault.lock  the writers' flock
//
// vault.json is versioned:
//
//	{
//	  "version": 1,
//	  "key_check": "<base64 nonce||sealed constant>",
//	  "entries": {
//	    "skill:acme.echo_http/api_token": {
//	      "nonce": "<base64, 12 bytes>",
//	      "ciphertext": "<base64>",
//	      "updated_at": "2025-01-02T03:04:05Z"
//	    }
//	  }
//	}
//
// # Encryption
//
// Each value is sealed with AES-256-GCM (standard library) under a fresh
// random 96-bit nonce, with additional data "palyra-vault-v1\x00" followed
// by the entry's full name: a ciphertext copied under another name does not
// authenticate (ErrCorrupt). key_check is a constant sealed the same way
// under its own additional data; a key that does not open it is the wrong
// key (ErrKeyMismatch), told apart from a damaged entry. Nothing is
// re-encrypted on read. The vault does not protect against rollback: an
// attacker who can write the file may put back an older copy of it.
//
// # Keys
//
// The key comes from the first of: Config.Key; Config.EncodedKey (base64 of
// 32 bytes); Config.KeyCommand, run with /bin/sh -c under KeyCommandTimeout
// and the caller's context, its standard output being the base64 key; else
// vault.key. The package reads no environment: palyra and palyra-host fill
// EncodedKey from $PALYRA_VAULT_KEY and KeyCommand from
// $PALYRA_VAULT_KEY_COMMAND, and errors name both the field and the
// variable. A key file whose mode is wider than 0600 is
// refused (ErrKeyInsecure). A vault that already holds sealed data never
// gets a new key file (ErrKeyMissing): that key could not open it.
//
// # Secrecy
//
// No error, and nothing the package prints, carries a secret value or key
// material: errors name the file, the entry and the key source. The key
// command's text is never quoted (it may embed the key), and of its
// standard error only a short first-line snippet with every long base64 or
// hex run redacted is. Get returns a plain []byte that the caller owns,
// because its one consumer, the broker, formats it into a header; callers
// must not log it.
//
// # Concurrency
//
// A Vault is safe for concurrent use, and several processes may share one
// state directory: Set and Delete hold an exclusive flock on vault.lock
// (waiting at most MaxLockWait, and no longer than their context) around
// read, change and an atomic replace of vault.json (temporary file, fsync,
// rename, directory fsync). Readers never see a half-written file.
//
// # Replication
//
// A cluster (host/cluster) replicates the vault's ciphertext, never its
// key: SealedEntries reads the entries still sealed, with the vault's key
// check, and Import stores such an entry in another node's vault as it is,
// only when that vault's own key opens the key check and the entry
// authenticates under its name (else ErrKeyMismatch or ErrCorrupt, and
// nothing is written). A node without the key so never holds an entry it
// cannot open: Has is false and the skill reports the secret missing.
// DeleteSealed removes an entry only if it is still the sealed value a
// replicated delete names.
//
// # Limits
//
// MaxSecretBytes per value, MaxEntries entries, MaxVaultFileBytes for
// vault.json, MaxKeyBytes and MaxScopeBytes per name part. Every limit's
// error says the limit and the size seen.
package vault
