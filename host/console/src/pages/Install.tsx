import { useState, type FormEvent, type ReactNode } from 'react';
import { api } from '../api/client';
import type { InstallResult } from '../api/types';
import { Banner, ConfirmDialog, errorBanner, humanBytes, type BannerState } from '../components/common';
import { Link } from '../router';
import { diffLines, emptySourceForm, InstallPreview, refusedResult, sourceRefOf, type SourceErrors, type SourceForm } from './registry';

type Flags = { allow_tofu: boolean; accept_capabilities: boolean; force: boolean };

export function InstallPage() {
  const [mode, setMode] = useState<'file' | 'registry'>('file');
  const [flags, setFlags] = useState<Flags>({ allow_tofu: false, accept_capabilities: false, force: false });
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [installed, setInstalled] = useState<string | null>(null);

  const flag = (k: keyof Flags, label: string, hint: string) => (
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
  const options = (
    <fieldset>
      <legend>Options</legend>
      {flag('allow_tofu', 'Trust the publisher’s key on first use (TOFU)', 'Pins an unknown publisher key in the trust store instead of refusing it.')}
      {flag('accept_capabilities', 'Accept the requested capabilities', 'Needed when the skill asks for capabilities beyond the operator profile’s defaults, or beyond the installed version.')}
      {flag('force', 'Replace an installed version with the same number', 'Reinstalls over an existing version.')}
    </fieldset>
  );
  const done = (res: { skill_id?: string; version?: string } | null, what: string) => {
    const id = res?.skill_id ?? null;
    setInstalled(id);
    setBanner({ kind: 'success', title: `Installed ${what}${id ? ` as ${id}` : ''}${res?.version ? ` ${res.version}` : ''}.`, details: res });
  };
  const failed = (what: string, e: unknown) => {
    setInstalled(null);
    setBanner(errorBanner(`Installing ${what} failed`, e));
  };

  return (
    <>
      <h1>Install a skill</h1>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      {installed ? (
        <p>
          Open <Link to={`/skills/${encodeURIComponent(installed)}`}>{installed}</Link>.
        </p>
      ) : null}
      <div className="toolbar" role="radiogroup" aria-label="Where the skill comes from">
        {(
          [
            ['file', 'From a file'],
            ['registry', 'From a registry'],
          ] as const
        ).map(([m, label]) => (
          <label key={m} className="check" htmlFor={`mode-${m}`}>
            <input id={`mode-${m}`} type="radio" name="install-mode" checked={mode === m} onChange={() => setMode(m)} data-testid={`install-mode-${m}`} /> {label}
          </label>
        ))}
      </div>
      {mode === 'file' ? (
        <FileInstall options={options} flags={flags} onDone={done} onFail={failed} />
      ) : (
        <RegistryInstall options={options} flags={flags} onDone={done} onFail={failed} clearBanner={() => setBanner(null)} />
      )}
    </>
  );
}

interface Part {
  options: ReactNode;
  flags: Flags;
  onDone: (res: { skill_id?: string; version?: string } | null, what: string) => void;
  onFail: (what: string, e: unknown) => void;
}

/**
 * Install from a file: Install… sends the artifact as a dry run first (every
 * check, nothing written) and the confirmation shows what it would install
 * (skill, version, publisher, signer, trust decision, the capabilities it
 * would be granted, the size); Install sends it again for real.
 */
function FileInstall({ options, flags, onDone, onFail }: Part) {
  const [file, setFile] = useState<File | null>(null);
  const [confirm, setConfirm] = useState(false);
  const [fileError, setFileError] = useState('');
  const [checking, setChecking] = useState(false);
  const [preview, setPreview] = useState<{ result: InstallResult; escalates: boolean } | null>(null);
  const [checkError, setCheckError] = useState<BannerState | null>(null);

  const ask = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) {
      setFileError('Choose a .palyra-skill file.');
      return;
    }
    setFileError('');
    setPreview(null);
    setCheckError(null);
    setChecking(true);
    try {
      setPreview({ result: await api.install(file, { ...flags, dry_run: true }), escalates: false });
    } catch (err) {
      const refused = refusedResult<InstallResult>(err, 'skill_id');
      if (refused) setPreview({ result: refused, escalates: true });
      else setCheckError(errorBanner('The check of the artifact failed', err));
    }
    setChecking(false);
    setConfirm(true);
  };

  const install = async () => {
    if (!file) return;
    try {
      const res = (await api.install(file, flags)) as InstallResult & { inventory?: { skill_id?: string } };
      onDone({ ...res, skill_id: res?.skill_id ?? res?.inventory?.skill_id }, file.name);
    } catch (e) {
      onFail(file.name, e);
    }
    setConfirm(false);
  };

  const needsAccept = !!preview?.escalates && !flags.accept_capabilities;
  const ticked = Object.entries(flags)
    .filter(([, v]) => v)
    .map(([k]) => k);

  return (
    <>
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
        {options}
        <button type="submit" disabled={checking} data-testid="install-submit">
          {checking ? 'Checking…' : 'Install…'}
        </button>
      </form>
      {confirm && file ? (
        <ConfirmDialog
          title={preview ? `Install ${preview.result.skill_id} ${preview.result.version}?` : `Install ${file.name}?`}
          confirmLabel="Install"
          canConfirm={!!preview && !needsAccept}
          onClose={() => setConfirm(false)}
          onConfirm={install}
        >
          <p data-testid="install-file-summary">
            <code className="wrap">{file.name}</code>, <span data-testid="install-file-size">{humanBytes(file.size)}</span>. Options: {ticked.join(', ') || 'none'}.
          </p>
          {checkError ? (
            <div className="banner banner-error" role="alert" data-testid="install-check-error">
              <div className="banner-body">
                <strong>{checkError.title}</strong>
                <p>{checkError.message}</p>
                <p>Nothing was installed. Change the options and choose Install… again.</p>
              </div>
            </div>
          ) : null}
          {preview ? <InstallPreview result={preview.result} /> : null}
          {needsAccept ? (
            <p className="field-error" data-testid="install-escalation">
              This version is granted more than the installed one: tick “Accept the requested capabilities” first.
            </p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/**
 * Install from a registry: the form's source is checked with a dry run
 * first, whose result is shown; Install sends the same request without
 * dry_run, with the options as ticked then.
 */
export function RegistryInstall({ options, flags, onDone, onFail, clearBanner }: Part & { clearBanner: () => void }) {
  const [form, setForm] = useState<SourceForm>(emptySourceForm);
  const [errors, setErrors] = useState<SourceErrors>({});
  const [preview, setPreview] = useState<{ result: InstallResult; escalates: boolean } | null>(null);
  const [checkError, setCheckError] = useState<BannerState | null>(null);
  const [busy, setBusy] = useState(false);

  const set = (patch: Partial<SourceForm>) => {
    setForm({ ...form, ...patch });
    setPreview(null); // a preview is of the source it was asked for
  };
  const parsed = () => {
    const r = sourceRefOf(form);
    if ('errors' in r) {
      setErrors(r.errors);
      return null;
    }
    setErrors({});
    return r.ref;
  };

  const check = async (e: FormEvent) => {
    e.preventDefault();
    const ref = parsed();
    if (!ref) return;
    setBusy(true);
    setPreview(null);
    setCheckError(null);
    clearBanner();
    try {
      const result = await api.installFrom(ref, { ...flags, dry_run: true });
      setPreview({ result, escalates: false });
    } catch (err) {
      // An escalation over the installed version is refused with the
      // result (and its diff) in the details: shown, to be accepted.
      const refused = refusedResult<InstallResult>(err, 'skill_id');
      if (refused) setPreview({ result: refused, escalates: true });
      else setCheckError(errorBanner('The check failed', err));
    }
    setBusy(false);
  };

  const install = async () => {
    const ref = parsed();
    if (!ref || !preview) return;
    setBusy(true);
    const what = 'from the registry';
    try {
      const res = await api.installFrom(ref, { ...flags, dry_run: false });
      setPreview(null);
      onDone(res, what);
    } catch (err) {
      onFail(what, err);
    }
    setBusy(false);
  };

  const field = (k: keyof SourceErrors, label: string, input: ReactNode, hint?: string) => (
    <div className="field">
      <label htmlFor={`src-${k}`}>{label}</label>
      {input}
      {hint ? (
        <small id={`src-${k}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {errors[k] ? (
        <small id={`src-${k}-err`} className="field-error" data-testid={`src-${k}-error`}>
          {errors[k]}
        </small>
      ) : null}
    </div>
  );
  const text = (k: keyof SourceErrors & keyof SourceForm, placeholder: string, hint?: boolean) => (
    <input
      id={`src-${k}`}
      type="text"
      value={form[k] as string}
      placeholder={placeholder}
      spellCheck={false}
      onChange={(e) => set({ [k]: e.target.value })}
      aria-invalid={errors[k] ? true : undefined}
      aria-describedby={[hint ? `src-${k}-hint` : '', errors[k] ? `src-${k}-err` : ''].filter(Boolean).join(' ') || undefined}
      data-testid={`src-${k}`}
    />
  );
  const needsAccept = !!preview?.escalates && !flags.accept_capabilities;
  const diff = preview ? diffLines(preview.result.capability_diff, preview.result.escalation) : [];

  return (
    <>
      <form className="card" onSubmit={check} noValidate data-testid="registry-form">
        <fieldset>
          <legend>Source</legend>
          <div className="field">
            <label htmlFor="src-kind">Kind</label>
            <select id="src-kind" value={form.kind} onChange={(e) => set({ kind: e.target.value as SourceForm['kind'] })} data-testid="src-kind">
              <option value="oci">OCI registry</option>
              <option value="url">Registry index (URL)</option>
              <option value="dir">Registry index (directory on the daemon’s machine)</option>
            </select>
          </div>
          {form.kind === 'oci' ? (
            <>
              {field('oci', 'OCI reference', text('oci', 'oci://registry.example/skills/echo:1.0.0', true), 'By tag (:1.0.0) or by digest (@sha256:…).')}
              <div className="field field-checkbox">
                <label className="check" htmlFor="src-plain-http">
                  <input id="src-plain-http" type="checkbox" checked={form.plainHttp} onChange={(e) => set({ plainHttp: e.target.checked })} aria-describedby="src-plain-http-hint" data-testid="src-plain-http" />{' '}
                  Plain HTTP
                </label>
                <small id="src-plain-http-hint" className="hint">
                  Only for a registry on a loopback address.
                </small>
              </div>
            </>
          ) : (
            <>
              {form.kind === 'url'
                ? field('url', 'Index URL', text('url', 'https://registry.example/index.json'))
                : field('dir', 'Registry directory', text('dir', '/srv/palyra-registry'))}
              {field('skillId', 'Skill id', text('skillId', 'acme.echo'))}
              {field('version', 'Version (optional)', text('version', 'the newest', true), 'Empty: the highest version the index lists.')}
              {form.kind === 'url'
                ? field(
                    'caCert',
                    'Registry CA certificate (optional, PEM)',
                    <textarea
                      id="src-caCert"
                      rows={3}
                      value={form.caCert}
                      spellCheck={false}
                      onChange={(e) => set({ caCert: e.target.value })}
                      aria-invalid={errors.caCert ? true : undefined}
                      aria-describedby={errors.caCert ? 'src-caCert-err' : undefined}
                      data-testid="src-caCert"
                    />,
                  )
                : null}
            </>
          )}
        </fieldset>
        {options}
        <button type="submit" disabled={busy} data-testid="registry-check">
          {busy && !preview ? 'Checking…' : 'Check (dry run)'}
        </button>
      </form>
      {checkError ? (
        <div className="banner banner-error" role="alert" data-testid="registry-check-error">
          <div className="banner-body">
            <strong>{checkError.title}</strong>
            <p>{checkError.message}</p>
          </div>
        </div>
      ) : null}
      {preview ? (
        <>
          <InstallPreview result={preview.result} />
          {preview.escalates ? (
            <p className="field-error" data-testid="registry-escalation">
              This version is granted more than the installed one ({diff.length} change{diff.length === 1 ? '' : 's'}): tick “Accept the requested capabilities” to install it.
            </p>
          ) : null}
          <div className="toolbar">
            <button type="button" onClick={install} disabled={busy || needsAccept} data-testid="registry-install">
              {busy ? 'Installing…' : `Install ${preview.result.skill_id} ${preview.result.version}`}
            </button>
            <button type="button" className="secondary" onClick={() => setPreview(null)} disabled={busy} data-testid="registry-cancel">
              Cancel
            </button>
          </div>
        </>
      ) : null}
    </>
  );
}
