import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { SecretOnce } from '../secret';
import { ErrorBox, Field, useLoad, when } from '../ui';

type Kind = 'slack' | 'zoom' | 'gchat';

interface Connector {
  id: string;
  name: string;
  type: Kind;
  status: string;
  enabled: boolean;
  configuration: Record<string, unknown>;
  created_at?: string;
  last_webhook_at?: string;
}

/** A credential as the list shows it: the API's `****`, or the agent secret it names (a name is no secret). */
const shown = (v: unknown) => (v && typeof v === 'object' && '$ref' in v ? `secret ${String((v as { $ref: string }).$ref).replace(/^agent\.secrets\./, '')}` : v === undefined ? '' : '****');

const SECRETS: Record<Kind, [string, string][]> = {
  slack: [
    ['bot_token', 'Bot token'],
    ['signing_secret', 'Signing secret'],
  ],
  zoom: [['callback_access_token', 'Callback access token']],
  gchat: [['service_account_key', 'Service-account key (JSON)']],
};

/**
 * The agent's connectors (issue 18, docs/connectors.md: Slack, Zoom Contact Center, Google Chat): the list with
 * each one's webhook and its credentials as the API masks them; create (credentials in password inputs, emptied
 * after the request whatever the answer; or `agent.secrets.<name>` references); a Zoom connector's generated token
 * shown once; delete after a confirmation. Needs `agent.administer`: a credential without it gets one message.
 */
export function AgentConnectors({ agent }: { agent: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/connectors`;
  const list = useLoad(() => api<{ connectors: Connector[] }>('GET', `${base}?limit=100`), [base]);
  const [error, setError] = useState<unknown>();
  const [confirm, setConfirm] = useState<string>();
  const [token, setToken] = useState<{ name: string; value: string }>();

  async function remove(id: string) {
    setError(undefined);
    setConfirm(undefined);
    try {
      await api('DELETE', `${base}/${encodeURIComponent(id)}`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="connectors">
      <h2 id="connectors">Connectors</h2>
      {forbidden(list.error) ? (
        <p class="notice" role="status">
          This credential may not manage this agent's connectors (the service answered 403).
        </p>
      ) : (
        <>
          <ErrorBox error={error ?? list.error} />
          {token && (
            <SecretOnce title={`Zoom connector token of ${token.name}`} label="Connector token" value={token.value} onDone={() => setToken(undefined)} kept="the service keeps it sealed and shows **** from now on">
              <p>
                Zoom sends it in the <code>x-zoom-connector-token</code> header; to change it, create a new connector.
              </p>
            </SecretOnce>
          )}
          {list.data?.connectors.length ? (
            <table aria-label="Connectors">
              <thead>
                <tr>
                  <th scope="col">Connector</th>
                  <th scope="col">Type</th>
                  <th scope="col">Webhook</th>
                  <th scope="col">Credentials</th>
                  <th scope="col">Last delivery</th>
                  <th scope="col">Delete</th>
                </tr>
              </thead>
              <tbody>
                {list.data.connectors.map((c) => (
                  <tr key={c.id}>
                    <td>
                      {c.name} <small>{c.status}</small>
                    </td>
                    <td>{c.type}</td>
                    <td>
                      <code>{String(c.configuration.webhook_path ?? c.configuration.audience_url ?? '')}</code>
                    </td>
                    <td>
                      {[...SECRETS[c.type], ...(c.type === 'zoom' ? [['connector_token', 'Connector token'] as [string, string]] : [])]
                        .filter(([f]) => c.configuration[f] !== undefined)
                        .map(([f, label]) => `${label}: ${shown(c.configuration[f])}`)
                        .join(', ')}
                    </td>
                    <td>{c.last_webhook_at ? when(c.last_webhook_at) : 'none yet'}</td>
                    <td>
                      {confirm === c.id ? (
                        <>
                          <button type="button" class="small" onClick={() => remove(c.id)} aria-label={`Really delete ${c.name}`}>
                            Really delete
                          </button>{' '}
                          <button type="button" class="small" onClick={() => setConfirm(undefined)}>
                            Keep
                          </button>
                        </>
                      ) : (
                        <button type="button" class="small" onClick={() => setConfirm(c.id)} aria-label={`Delete ${c.name}`}>
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            list.data && <p>No connectors yet.</p>
          )}
          <CreateConnector
            base={base}
            onCreated={(c) => {
              if (typeof c.configuration.connector_token === 'string' && c.configuration.connector_token !== '****') setToken({ name: c.name, value: c.configuration.connector_token });
              list.reload();
            }}
          />
        </>
      )}
    </section>
  );
}

function CreateConnector({ base, onCreated }: { base: string; onCreated: (c: Connector) => void }) {
  const [type, setType] = useState<Kind>('slack');
  const [name, setName] = useState('');
  const [appId, setAppId] = useState('');
  const [replies, setReplies] = useState(false);
  const [callback, setCallback] = useState('');
  // Credentials: each a value (a password input) or the name of one of the agent's secrets.
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [refs, setRefs] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const at = (f: string) => fields[f];
  const known = ['name', 'configuration.type', 'configuration.api_app_id', 'configuration.callback_url', ...SECRETS[type].map(([f]) => `configuration.${f}`)];
  const elsewhere = error && !Object.keys(fields).some((k) => known.includes(k));

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    const credentials = Object.fromEntries(
      SECRETS[type]
        .filter(([f]) => (secrets[f] ?? '') !== '')
        .map(([f]) => [f, refs[f] ? { $ref: `agent.secrets.${secrets[f].trim()}` } : secrets[f]]),
    );
    const configuration = { type, ...credentials, ...(type === 'slack' ? { api_app_id: appId.trim(), respond_to_thread_replies: replies } : type === 'zoom' ? { callback_url: callback.trim() } : {}) };
    try {
      const created = await api<Connector>('POST', base, { name: name.trim(), configuration });
      setDone(`Created connector ${created.name}.`);
      setName('');
      setAppId('');
      setCallback('');
      onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      // Whatever the answer, the credentials leave the page: typed again if the form is refused.
      setSecrets({});
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-connector">
      <h3 id="create-connector">Add a connector</h3>
      <div class="row">
        <Field label="Connector type" error={at('configuration.type')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={type} onChange={(e) => (setType(e.currentTarget.value as Kind), setSecrets({}))}>
              <option value="slack">Slack</option>
              <option value="zoom">Zoom Contact Center</option>
              <option value="gchat">Google Chat</option>
            </select>
          )}
        </Field>
        <Field label="Connector name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        {type === 'slack' && (
          <Field label="Slack app id" error={at('configuration.api_app_id')} hint="A…, from the app's settings">
            {(id, d) => <input id={id} aria-describedby={d} value={appId} onInput={(e) => setAppId(e.currentTarget.value)} />}
          </Field>
        )}
        {type === 'zoom' && (
          <Field label="Callback URL" error={at('configuration.callback_url')} hint="https">
            {(id, d) => <input id={id} aria-describedby={d} class="wide" value={callback} onInput={(e) => setCallback(e.currentTarget.value)} />}
          </Field>
        )}
      </div>
      {type === 'slack' && (
        <label class="check">
          <input type="checkbox" checked={replies} onChange={(e) => setReplies(e.currentTarget.checked)} /> Answer replies in threads the agent is in
        </label>
      )}
      <div class="row">
        {SECRETS[type].map(([f, label]) => (
          <div key={f}>
            <Field label={label} error={at(`configuration.${f}`)} hint={refs[f] ? 'the name of one of the agent’s secrets' : 'write-only: never shown again'}>
              {(id, d) => {
                const onInput = (e: { currentTarget: HTMLInputElement }) => setSecrets((s) => ({ ...s, [f]: e.currentTarget.value }));
                return refs[f] ? <input id={id} aria-describedby={d} value={secrets[f] ?? ''} onInput={onInput} /> : <input id={id} aria-describedby={d} type="password" autoComplete="off" value={secrets[f] ?? ''} onInput={onInput} />;
              }}
            </Field>
            <label class="check">
              <input type="checkbox" checked={!!refs[f]} onChange={(e) => (setRefs((r) => ({ ...r, [f]: e.currentTarget.checked })), setSecrets((s) => ({ ...s, [f]: '' })))} /> {label}: an agent secret
            </label>
          </div>
        ))}
      </div>
      <ErrorBox error={elsewhere ? error : undefined} />
      {done && <p role="status">{done}</p>}
      <button type="submit">Create connector</button>
    </form>
  );
}
