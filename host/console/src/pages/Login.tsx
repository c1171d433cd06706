import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { Banner, errorBanner, type BannerState } from '../components/common';

export function LoginPage({ notice, onLogin }: { notice: string | null; onLogin: (token: string) => void }) {
  const [token, setTok] = useState('');
  const [busy, setBusy] = useState(false);
  const [banner, setBanner] = useState<BannerState | null>(notice ? { kind: 'info', title: notice } : null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setBanner({ kind: 'error', title: 'Enter the admin token.' });
      return;
    }
    setBusy(true);
    try {
      await api.check(t);
      onLogin(t);
    } catch (err) {
      setBanner(errorBanner('Sign-in failed', err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <header className="app-header">
        <span className="brand">palyra-host console</span>
      </header>
      <main id="main" className="login">
      <h1>Sign in</h1>
      <p>
        Sign in with the daemon’s admin token (the file <code>daemon/admin-token</code> in its state directory). It is kept for this tab
        only.
      </p>
      <Banner banner={banner} />
      <form onSubmit={submit} className="login-form" noValidate>
        <div className="field">
          <label htmlFor="token">Admin token</label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={token}
            onChange={(e) => setTok(e.target.value)}
            data-testid="login-token"
            required
          />
        </div>
        <button type="submit" disabled={busy} data-testid="login-submit">
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      </main>
    </>
  );
}
