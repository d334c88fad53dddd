import { useState } from 'preact/hooks';
import { api, ApiError, clearCredential, Credential, saveCredential } from '../api';
import { ErrorBox, Field } from '../ui';

/**
 * Sign in with an API key or an app client (OAuth client credentials). The credential is checked with a
 * call before it is kept: 401 means it is not valid; any other answer means the service knows the caller.
 */
export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: (c: Credential) => void }) {
  const [mode, setMode] = useState<'key' | 'client'>('key');
  const [key, setKey] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      let credential: Credential;
      if (mode === 'key') {
        credential = { kind: 'key', value: key.trim(), label: `API key …${key.trim().slice(-4)}` };
      } else {
        const res = await fetch('/oauth2/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
        });
        const body = await res.json();
        if (!res.ok) throw new ApiError(res.status, body.messages ?? [body.error_description ?? body.error ?? 'sign-in refused']);
        credential = { kind: 'token', value: body.access_token, label: `app client ${clientId}` };
      }
      saveCredential(credential);
      try {
        await api('GET', '/v2/corpora?limit=1');
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) throw new Error('That credential is not valid: check it and sign in again');
      }
      onSignedIn(credential);
    } catch (err) {
      clearCredential();
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in" id="main">
      <h1>Sign in to the console</h1>
      {/* The page is public: it names the file, not the server's own path (DATA_DIR, ./data unless set). */}
      <p>
        Use the API key the service printed on its first start (also stored on the server in <code>&lt;DATA_DIR&gt;/admin-api-key</code>, <code>./data</code> unless <code>DATA_DIR</code> is set), or an app client.
      </p>
      {notice && <p class="notice">{notice}</p>}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="mode" checked={mode === 'key'} onChange={() => setMode('key')} /> an API key
          </label>
          <label>
            <input type="radio" name="mode" checked={mode === 'client'} onChange={() => setMode('client')} /> an app client
          </label>
        </fieldset>
        {mode === 'key' ? (
          <Field label="API key">{(id) => <input id={id} type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />}</Field>
        ) : (
          <>
            <Field label="Client id">{(id) => <input id={id} required value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />}</Field>
            <Field label="Client secret">{(id) => <input id={id} type="password" autoComplete="off" required value={clientSecret} onInput={(e) => setClientSecret(e.currentTarget.value)} />}</Field>
          </>
        )}
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
