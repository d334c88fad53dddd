import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { mayWrite } from '../permissions';
import { ErrorBox, Field, Loading, masked, Page, useLoad, when } from '../ui';

interface Llm {
  id: string;
  name: string;
  type: string;
  model: string;
  uri?: string;
  enabled?: boolean;
  auth?: Record<string, unknown>;
  created_at?: string;
}

/** The service's model types (docs/llms.md); the API refuses any other with its own message. */
const TYPES = ['openai-compatible', 'openai-responses', 'anthropic', 'vertex-ai'];

/**
 * The auth variants a form can carry in plain fields (the others, such as service-account keys, are JSON files:
 * register those with `POST /v2/llms`). `secret` fields are password inputs, cleared after the request.
 */
const AUTHS: Record<string, { label: string; fields: { name: string; label: string; secret?: boolean }[] }> = {
  none: { label: 'none', fields: [] },
  bearer: { label: 'bearer token', fields: [{ name: 'token', label: 'Token', secret: true }] },
  header: {
    label: 'custom header',
    fields: [
      { name: 'header', label: 'Header name' },
      { name: 'value', label: 'Header value', secret: true },
    ],
  },
  api_key: { label: 'API key', fields: [{ name: 'api_key', label: 'Model API key', secret: true }] },
};

export function ModelsPage() {
  const list = useLoad(() => api<{ llms: Llm[] }>('GET', '/v2/llms?limit=100'), []);
  const mayRegister = useLoad(() => mayWrite('POST', '/v2/llms'), []);
  if (forbidden(list.error))
    return (
      <Page title="Models">
        <p class="notice" role="status">
          This credential may not use the registered language models (the service answered 403 to the list of models). Sign in with an API key or app client of an owner or administrator to register and test models.
        </p>
      </Page>
    );
  return (
    <Page title="Models">
      {mayRegister.data === true && <RegisterModel onRegistered={list.reload} />}
      <h2>Registered models</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="models" />
      ) : list.data?.llms.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Model</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Auth</th>
              <th scope="col">Registered</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.llms.map((m) => (
              <ModelRow key={m.id} llm={m} mayManage={mayRegister.data === true} onDeleted={list.reload} />
            ))}
          </tbody>
        </table>
      ) : (
        list.data && <p>No language model is registered yet{mayRegister.data ? ': register one above' : ''}.</p>
      )}
    </Page>
  );
}

/** `bearer (token ****)`: the read view's auth, its secrets masked by the service and again here. */
function authText(auth: Record<string, unknown> | undefined): string {
  if (!auth) return 'none';
  const { type, ...rest } = masked(auth) as Record<string, unknown>;
  const parts = Object.entries(rest).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(' ') : String(v)}`);
  return parts.length ? `${String(type)} (${parts.join(', ')})` : String(type);
}

function ModelRow({ llm, mayManage, onDeleted }: { llm: Llm; mayManage: boolean; onDeleted: () => void }) {
  const [test, setTest] = useState<{ running?: boolean; answer?: string; error?: unknown }>({});
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>();

  /** The API has no test route for a stored model: one short chat completion through it, as any client would call it. */
  async function runTest() {
    setTest({ running: true });
    try {
      const res = await api<{ choices?: { message?: { content?: string | null } }[] }>('POST', '/v2/llms/chat/completions', {
        model: llm.name,
        messages: [{ role: 'user', content: 'Reply with one short line to show that you work.' }],
      });
      setTest({ answer: res.choices?.[0]?.message?.content?.trim() || '(an empty answer)' });
    } catch (e) {
      setTest({ error: e });
    }
  }

  async function remove() {
    setError(undefined);
    try {
      await api('DELETE', `/v2/llms/${encodeURIComponent(llm.id)}`);
      onDeleted();
    } catch (e) {
      setError(e);
      setConfirming(false);
    }
  }

  return (
    <tr>
      <th scope="row">{llm.name}</th>
      <td>{llm.type}</td>
      <td>
        <code>{llm.model}</code>
      </td>
      <td>
        <code>{llm.uri ?? ''}</code>
      </td>
      <td>{authText(llm.auth)}</td>
      <td>{when(llm.created_at)}</td>
      <td>
        <div class="row">
          <button type="button" class="small" onClick={runTest} disabled={test.running} aria-label={`Test ${llm.name}`}>
            {test.running ? 'Testing…' : 'Test'}
          </button>
          {mayManage &&
            (confirming ? (
              <>
                <button type="button" class="small danger" onClick={remove} aria-label={`Confirm: delete ${llm.name}`}>
                  Delete {llm.name}
                </button>
                <button type="button" class="small" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </>
            ) : (
              <button type="button" class="small" onClick={() => setConfirming(true)} aria-label={`Delete ${llm.name}`}>
                Delete
              </button>
            ))}
        </div>
        <div aria-live="polite" aria-label={`Test of ${llm.name}`} role="region">
          {test.answer !== undefined && (
            <p class="status">
              Answered: <q>{test.answer}</q>
            </p>
          )}
          <ErrorBox error={test.error} />
        </div>
        <ErrorBox error={error} />
      </td>
    </tr>
  );
}

function RegisterModel({ onRegistered }: { onRegistered: () => void }) {
  const [type, setType] = useState(TYPES[0]);
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [uri, setUri] = useState('');
  const [authType, setAuthType] = useState('none');
  // Credential fields live only in this state until the request is sent; never stored, never shown back.
  const [auth, setAuth] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const at = (prefix: string) => Object.entries(fields).find(([k]) => k === prefix || k.startsWith(`${prefix}.`))?.[1];

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    const body = {
      type,
      name,
      model,
      ...(uri.trim() ? { uri: uri.trim() } : {}),
      ...(authType !== 'none' ? { auth: { type: authType, ...Object.fromEntries(AUTHS[authType].fields.map((f) => [f.name, auth[f.name] ?? ''])) } } : {}),
    };
    try {
      const created = await api<Llm>('POST', '/v2/llms', body);
      setDone(created.name);
      setName('');
      setModel('');
      setUri('');
      onRegistered();
    } catch (err) {
      setError(err);
    } finally {
      // Whatever the answer, the credential leaves the page: a refused registration asks for it again.
      setAuth({});
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="register-model">
      <h2 id="register-model">Register a model</h2>
      <div class="row">
        <Field label="Type" error={at('type')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={type} onChange={(e) => setType(e.currentTarget.value)}>
              {TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Name" error={at('name')} hint="what agents and requests call it">
          {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Upstream model" error={at('model')} hint="the provider's model id">
          {(id, d) => <input id={id} aria-describedby={d} required value={model} onInput={(e) => setModel(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Endpoint URI" error={at('uri')} hint="e.g. https://api.example.com/v1/chat/completions (optional for anthropic)">
        {(id, d) => <input id={id} aria-describedby={d} class="wide" value={uri} onInput={(e) => setUri(e.currentTarget.value)} />}
      </Field>
      <div class="row">
        <Field label="Authentication" error={fields['auth'] ?? fields['auth.type']}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={authType} onChange={(e) => (setAuthType(e.currentTarget.value), setAuth({}))}>
              {Object.entries(AUTHS).map(([k, v]) => (
                <option key={k} value={k}>
                  {v.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {AUTHS[authType].fields.map((f) => (
          <Field key={f.name} label={f.label} error={fields[`auth.${f.name}`]} hint={f.secret ? 'sent once, stored encrypted, never shown again' : undefined}>
            {(id, d) =>
              f.secret ? (
                <input id={id} aria-describedby={d} type="password" autoComplete="new-password" required value={auth[f.name] ?? ''} onInput={(e) => setAuth((a) => ({ ...a, [f.name]: e.currentTarget.value }))} />
              ) : (
                <input id={id} aria-describedby={d} autoComplete="off" required value={auth[f.name] ?? ''} onInput={(e) => setAuth((a) => ({ ...a, [f.name]: e.currentTarget.value }))} />
              )
            }
          </Field>
        ))}
      </div>
      {/* One message per mistake: below the form only what no field shows. */}
      {!(error instanceof ApiError && Object.keys(fields).length && Object.keys(fields).every((k) => ['type', 'name', 'model', 'uri', 'auth'].some((p) => k === p || k.startsWith(`${p}.`)))) && <ErrorBox error={error} />}
      {done && <p role="status">Registered {done}: test it in the list below.</p>}
      <button type="submit">Register model</button>
    </form>
  );
}
