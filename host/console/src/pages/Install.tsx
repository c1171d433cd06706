import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { Banner, ConfirmDialog, errorBanner, type BannerState } from '../components/common';
import { Link } from '../router';

export function InstallPage() {
  const [file, setFile] = useState<File | null>(null);
  const [flags, setFlags] = useState({ allow_tofu: false, accept_capabilities: false, force: false });
  const [confirm, setConfirm] = useState(false);
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [fileError, setFileError] = useState('');
  const [installed, setInstalled] = useState<string | null>(null);

  const ask = (e: FormEvent) => {
    e.preventDefault();
    if (!file) {
      setFileError('Choose a .palyra-skill file.');
      return;
    }
    setFileError('');
    setConfirm(true);
  };

  const install = async () => {
    if (!file) return;
    try {
      const res = (await api.install(file, flags)) as { skill_id?: string; version?: string; inventory?: { skill_id?: string } };
      const id = res?.skill_id ?? res?.inventory?.skill_id ?? null;
      setInstalled(id);
      setBanner({ kind: 'success', title: `Installed ${file.name}${id ? ` as ${id}` : ''}${res?.version ? ` ${res.version}` : ''}.`, details: res });
    } catch (e) {
      setInstalled(null);
      setBanner(errorBanner(`Installing ${file.name} failed`, e));
    }
    setConfirm(false);
  };

  const flag = (k: keyof typeof flags, label: string, hint: string) => (
    <div className="field field-checkbox">
      <label className="check" htmlFor={`flag-${k}`}>
        <input id={`flag-${k}`} type="checkbox" checked={flags[k]} onChange={(e) => setFlags({ ...flags, [k]: e.target.checked })} aria-describedby={`flag-${k}-hint`} data-testid={`flag-${k}`} />{' '}
        {label}
      </label>
      <small id={`flag-${k}-hint`} className="hint">
        {hint}
      </small>
    </div>
  );

  return (
    <>
      <h1>Install a skill</h1>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      {installed ? (
        <p>
          Open <Link to={`/skills/${encodeURIComponent(installed)}`}>{installed}</Link>.
        </p>
      ) : null}
      <form className="card" onSubmit={ask} noValidate data-testid="install-form">
        <div className="field">
          <label htmlFor="artifact">Artifact (.palyra-skill)</label>
          <input
            id="artifact"
            type="file"
            accept=".palyra-skill,application/zip,application/octet-stream"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            aria-invalid={fileError ? true : undefined}
            aria-describedby={fileError ? 'artifact-err' : undefined}
            data-testid="install-file"
          />
          {fileError ? (
            <small id="artifact-err" className="field-error">
              {fileError}
            </small>
          ) : null}
        </div>
        <fieldset>
          <legend>Options</legend>
          {flag('allow_tofu', 'Trust the publisher’s key on first use (TOFU)', 'Pins an unknown publisher key in the trust store instead of refusing it.')}
          {flag('accept_capabilities', 'Accept the requested capabilities', 'Needed when the skill asks for capabilities beyond the operator profile’s defaults.')}
          {flag('force', 'Replace an installed version with the same number', 'Reinstalls over an existing version.')}
        </fieldset>
        <button type="submit" data-testid="install-submit">
          Install…
        </button>
      </form>
      {confirm && file ? (
        <ConfirmDialog title={`Install ${file.name}?`} confirmLabel="Install" onClose={() => setConfirm(false)} onConfirm={install}>
          <p>
            {file.size} bytes. Options: {Object.entries(flags).filter(([, v]) => v).map(([k]) => k).join(', ') || 'none'}.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
