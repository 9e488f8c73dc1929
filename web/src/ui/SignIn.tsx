import { useState } from 'preact/hooks';
import { ApiError, createApi, errorText, publicApi } from '../api';
import { Session, sessionFromToken } from '../session';
import type { UiConfig } from '../types';
import { submitOnModEnter } from './hooks';

interface Props {
  config: UiConfig | null;
  notice?: string;
  onSignedIn(s: Session, remember: boolean): void;
}

const ROLES = [
  { role: 'approver', hint: 'decides requests the policy gives approvers' },
  { role: 'admin', hint: 'decides everything, sees the audit trail' },
  { role: 'auditor', hint: 'reads the audit trail, decides nothing' },
];

/** Checks a token against the API before keeping it, so a bad paste is said at once and plainly. */
async function check(raw: string): Promise<Session> {
  const s = sessionFromToken(raw);
  if (!s) throw new Error('That is not a token: paste the whole JWT (three parts separated by dots).');
  if (s.roles.includes('agent'))
    throw new Error('That is an agent token. The inbox is for people: agent tokens can never decide.');
  try {
    await createApi({ token: s.token }, () => undefined)
      .status()
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 403) return null; // a person without approver/admin/auditor roles: the token is still good
        throw e;
      });
  } catch (e) {
    throw new Error(
      e instanceof ApiError && e.status === 401
        ? `The server refused that token: ${e.problem.detail ?? 'invalid'}`
        : `Could not reach Tollgate: ${errorText(e)}`,
    );
  }
  return s;
}

/** Where the provider sends the person back: the card or view they opened, on this server. */
function returnTo(): string {
  return window.location.pathname + window.location.search + window.location.hash;
}

export function SignIn({ config, notice, onSignedIn }: Props) {
  const [token, setToken] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [sub, setSub] = useState('');
  const [name, setName] = useState('');
  const [roles, setRoles] = useState<string[]>(['approver']);
  const [tenant, setTenant] = useState('default');
  const [devError, setDevError] = useState<string>();

  async function withToken(e: Event) {
    e.preventDefault();
    if (busy) return; // Ctrl+Enter submits past the disabled button
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await check(token), remember);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  async function dev(e: Event) {
    e.preventDefault();
    setBusy(true);
    setDevError(undefined);
    try {
      const { token: minted } = await publicApi.devToken({
        sub: sub.trim(),
        name: name.trim() || undefined,
        roles,
        tenant: tenant.trim() || undefined,
      });
      onSignedIn(await check(minted), remember);
    } catch (err) {
      setDevError(
        err instanceof ApiError
          ? (err.problem.errors?.map((f) => `${f.path}: ${f.message}`).join('; ') ?? errorText(err))
          : (err as Error).message,
      );
    } finally {
      setBusy(false);
    }
  }

  const sso = config?.sso ?? null;
  // With single sign-on people use the provider; a token stays possible for the provider's own tokens (what
  // `tollgate login` keeps) and for break-glass API tokens, folded away so it is not mistaken for the way in.
  const tokenForm = (
    <form class={sso ? undefined : 'panel'} onSubmit={withToken} aria-labelledby="token-h">
      <h2 id="token-h">With a token</h2>
      <label for="token">Bearer token</label>
      <textarea
        id="token"
        name="token"
        rows={3}
        spellcheck={false}
        autocomplete="off"
        placeholder="eyJhbGciOi…"
        value={token}
        onInput={(e) => setToken(e.currentTarget.value)}
        onKeyDown={submitOnModEnter}
        aria-keyshortcuts="Control+Enter Meta+Enter"
        aria-describedby="token-hint token-error"
        required
      />
      <p id="token-hint" class="hint">
        Ask your admin for one. For local use, in the Tollgate checkout:{' '}
        <code>npx tollgate token --sub you --role approver</code> (elsewhere:{' '}
        <code>node /path/to/tollgate/bin/tollgate.js token …</code>)
      </p>
      <label class="check">
        <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> Keep me
        signed in on this device
      </label>
      {error && (
        <p id="token-error" class="error" role="alert">
          {error}
        </p>
      )}
      <button class="primary" type="submit" disabled={busy || token.trim() === ''}>
        Sign in
      </button>
    </form>
  );

  const toggle = (role: string) => setRoles((rs) => (rs.includes(role) ? rs.filter((r) => r !== role) : [...rs, role]));

  return (
    <main class="signin" id="main">
      <div class="brand-block">
        <p class="brand" aria-hidden="true">
          Tollgate
        </p>
        <h1>Sign in to the approval inbox</h1>
        <p class="muted">AI agents ask here before they run a tool that needs a person. You approve, edit or reject.</p>
      </div>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {sso && (
        <section class="panel" aria-labelledby="sso-h" data-testid="sso-sign-in">
          <h2 id="sso-h">With your organisation's account</h2>
          <a class="button primary" href={`/auth/login?return_to=${encodeURIComponent(returnTo())}`}>
            Sign in with {sso.provider}
          </a>
        </section>
      )}
      {sso ? (
        <details class="panel">
          <summary>Use an API token instead</summary>
          {tokenForm}
        </details>
      ) : (
        tokenForm
      )}

      {config?.devSignIn && (
        <form class="panel dev" onSubmit={dev} aria-labelledby="dev-h" data-testid="dev-sign-in">
          <h2 id="dev-h">Dev sign-in</h2>
          <p class="hint">
            Embedded dev mode: this server made its own signing secret, so it can give you a token for any name. It is
            never offered when real authentication is configured.
          </p>
          <div class="grid2">
            <div>
              <label for="dev-sub">User id</label>
              <input
                id="dev-sub"
                value={sub}
                onInput={(e) => setSub(e.currentTarget.value)}
                placeholder="ann"
                required
                pattern="[A-Za-z0-9_.:@\-]{1,128}"
                autocomplete="username"
              />
            </div>
            <div>
              <label for="dev-name">Display name (optional)</label>
              <input
                id="dev-name"
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
                placeholder="Ann"
                autocomplete="name"
              />
            </div>
          </div>
          <fieldset>
            <legend>Roles</legend>
            {ROLES.map((r) => (
              <label class="check" key={r.role}>
                <input
                  type="checkbox"
                  name="role"
                  value={r.role}
                  checked={roles.includes(r.role)}
                  onChange={() => toggle(r.role)}
                />{' '}
                <strong>{r.role}</strong> <span class="muted">— {r.hint}</span>
              </label>
            ))}
          </fieldset>
          <label for="dev-tenant">Tenant</label>
          <input id="dev-tenant" value={tenant} onInput={(e) => setTenant(e.currentTarget.value)} />
          {devError && (
            <p class="error" role="alert">
              {devError}
            </p>
          )}
          <button class="primary" type="submit" disabled={busy || sub.trim() === '' || roles.length === 0}>
            Sign in as {sub.trim() || '…'}
          </button>
        </form>
      )}
    </main>
  );
}
