import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { mayWrite } from '../permissions';
import { SecretOnce } from '../secret';
import { ErrorBox, Field, Loading, Page, useLoad, when } from '../ui';

interface Grants {
  api_roles?: string[];
  corpus_roles?: { corpus_key: string; role: string }[];
  agent_roles?: { agent_key: string; role: string }[];
}
interface User extends Grants {
  id: string;
  username: string;
  email: string;
  enabled: boolean;
  description?: string;
  created_at?: string;
}
interface ApiKey extends Grants {
  id: string;
  name: string;
  secret_key: string;
  enabled: boolean;
  api_key_role: string;
  owner_username?: string;
  created_at?: string;
}
interface AppClient extends Grants {
  id: string;
  name: string;
  description?: string;
  client_id: string;
  client_secret: string;
  created_at?: string;
}

/**
 * Users, API keys and app clients (docs/auth.md). Each section is loaded on its own: a corpus administrator may
 * manage keys but not users, and sees the one section it may use; a credential refused all three gets one message.
 */
export function AccessPage() {
  const users = useLoad(() => api<{ users: User[] }>('GET', '/v2/users?limit=100'), []);
  // Without keys.manage the API lists only one's own keys, and only when asked for personal ones.
  const keys = useLoad(
    () =>
      api<{ api_keys: ApiKey[] }>('GET', '/v2/api_keys?limit=100')
        .then((r) => ({ ...r, own: false }))
        .catch((e: unknown) => {
          if (forbidden(e) && (e as ApiError).fieldErrors.api_key_role) return api<{ api_keys: ApiKey[] }>('GET', '/v2/api_keys?limit=100&api_key_role=personal').then((r) => ({ ...r, own: true }));
          throw e;
        }),
    [],
  );
  const clients = useLoad(() => api<{ app_clients: AppClient[] }>('GET', '/v2/app_clients?limit=100'), []);
  if (forbidden(users.error) && forbidden(keys.error) && forbidden(clients.error))
    return (
      <Page title="Access">
        <p class="notice" role="status">
          This credential may not manage users, API keys or app clients (the service answered 403 to each list). Sign in with the personal key of an owner or administrator, or of a user managing their own keys.
        </p>
      </Page>
    );
  return (
    <Page title="Access">
      <Section title="Users" id="users" state={users} refused="This credential may not manage users.">
        {users.data && <Users users={users.data.users} reload={users.reload} />}
      </Section>
      <Section title="API keys" id="api-keys" state={keys} refused="This credential may not manage API keys (keys that are not personal manage nothing).">
        {keys.data && <ApiKeys keys={keys.data.api_keys} own={keys.data.own} reload={keys.reload} />}
      </Section>
      <Section title="App clients" id="app-clients" state={clients} refused="This credential may not manage app clients.">
        {clients.data && <AppClients clients={clients.data.app_clients} reload={clients.reload} />}
      </Section>
    </Page>
  );
}

function Section({ title, id, state, refused, children }: { title: string; id: string; state: { loading: boolean; data?: unknown; error?: unknown }; refused: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {forbidden(state.error) ? (
        <p class="notice" role="status">
          {refused}
        </p>
      ) : (
        <>
          <ErrorBox error={state.error} />
          {state.loading && !state.data ? <Loading what={title.toLowerCase()} /> : children}
        </>
      )}
    </section>
  );
}

const rolesText = (g: Grants) =>
  [...(g.api_roles ?? []), ...(g.corpus_roles ?? []).map((r) => `${r.corpus_key}: ${r.role}`), ...(g.agent_roles ?? []).map((r) => `${r.agent_key}: ${r.role}`)].join(', ') || 'none';

const list = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/** `notes:viewer, docs:editor` → `[{corpus_key, role}]` (agent roles likewise); the API validates names and roles. */
function pairs<K extends string>(text: string, key: K): ({ role: string } & Record<K, string>)[] {
  return list(text).map((t) => {
    const [k, role = ''] = t.split(':').map((x) => x.trim());
    return { [key]: k, role } as { role: string } & Record<K, string>;
  });
}

/** The first field error whose path starts with `prefix` (`corpus_roles.0.role` under Corpus roles). */
function errorAt(error: unknown, prefix: string): string | undefined {
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  return Object.entries(fields).find(([k]) => k === prefix || k.startsWith(`${prefix}.`))?.[1];
}

/** The message below a form only when no field shows it: one message per mistake. */
function FormError({ error, placed }: { error: unknown; placed: string[] }) {
  if (error instanceof ApiError && Object.keys(error.fieldErrors).length && Object.keys(error.fieldErrors).every((k) => placed.some((p) => k === p || k.startsWith(`${p}.`)))) return null;
  return <ErrorBox error={error} />;
}

/** The three role lists, as text; shared by users and app clients. */
function RoleFields({ roles, setRoles, error }: { roles: { api: string; corpus: string; agent: string }; setRoles: (r: { api: string; corpus: string; agent: string }) => void; error: unknown }) {
  return (
    <div class="row">
      <Field label="Account and platform roles" error={errorAt(error, 'api_roles')} hint="e.g. agent_developer">
        {(id, d) => <input id={id} aria-describedby={d} value={roles.api} onInput={(e) => setRoles({ ...roles, api: e.currentTarget.value })} />}
      </Field>
      <Field label="Corpus roles" error={errorAt(error, 'corpus_roles')} hint="corpus:role, e.g. docs:viewer">
        {(id, d) => <input id={id} aria-describedby={d} value={roles.corpus} onInput={(e) => setRoles({ ...roles, corpus: e.currentTarget.value })} />}
      </Field>
      <Field label="Agent roles" error={errorAt(error, 'agent_roles')} hint="agent:role, e.g. bot:agent_user">
        {(id, d) => <input id={id} aria-describedby={d} value={roles.agent} onInput={(e) => setRoles({ ...roles, agent: e.currentTarget.value })} />}
      </Field>
    </div>
  );
}

const grantsBody = (roles: { api: string; corpus: string; agent: string }) => ({
  ...(list(roles.api).length ? { api_roles: list(roles.api) } : {}),
  ...(list(roles.corpus).length ? { corpus_roles: pairs(roles.corpus, 'corpus_key') } : {}),
  ...(list(roles.agent).length ? { agent_roles: pairs(roles.agent, 'agent_key') } : {}),
});
const NO_ROLES = { api: '', corpus: '', agent: '' };

function Users({ users, reload }: { users: User[]; reload: () => void }) {
  const [email, setEmail] = useState('');
  const [username, setUsername] = useState('');
  const [roles, setRoles] = useState(NO_ROLES);
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<{ username: string; key: string }>();
  const [rowError, setRowError] = useState<unknown>();

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const user = await api<User & { api_key: string }>('POST', '/v2/users', { email, ...(username ? { username } : {}), ...grantsBody(roles) });
      setCreated({ username: user.username, key: user.api_key });
      setEmail('');
      setUsername('');
      setRoles(NO_ROLES);
      reload();
    } catch (err) {
      setError(err);
    }
  }

  async function setEnabled(u: User, enabled: boolean) {
    setRowError(undefined);
    try {
      await api('PATCH', `/v2/users/${encodeURIComponent(u.username)}`, { enabled });
      reload();
    } catch (err) {
      setRowError(err);
    }
  }

  return (
    <>
      {created && (
        <SecretOnce title={`First key of ${created.username}`} label="Personal API key" value={created.key} onDone={() => setCreated(undefined)}>
          <p>Hand this key to {created.username}: users sign in with keys (there are no passwords) and then make their own.</p>
        </SecretOnce>
      )}
      <form class="card" onSubmit={submit} aria-labelledby="create-user">
        <h3 id="create-user">Create a user</h3>
        <div class="row">
          <Field label="Email" error={errorAt(error, 'email')}>
            {(id, d) => <input id={id} aria-describedby={d} type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Field label="Username" error={errorAt(error, 'username')} hint="the email when left empty">
            {(id, d) => <input id={id} aria-describedby={d} value={username} onInput={(e) => setUsername(e.currentTarget.value)} />}
          </Field>
        </div>
        <RoleFields roles={roles} setRoles={setRoles} error={error} />
        <FormError error={error} placed={['email', 'username', 'api_roles', 'corpus_roles', 'agent_roles']} />
        <button type="submit">Create user</button>
      </form>
      <ErrorBox error={rowError} />
      <table aria-label="Users">
        <thead>
          <tr>
            <th scope="col">Username</th>
            <th scope="col">Email</th>
            <th scope="col">Roles</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.id}>
              <th scope="row">{u.username}</th>
              <td>{u.email}</td>
              <td>{rolesText(u)}</td>
              <td>{u.enabled ? 'enabled' : 'disabled'}</td>
              <td>{when(u.created_at)}</td>
              <td>
                <button type="button" class="small" onClick={() => setEnabled(u, !u.enabled)} aria-label={`${u.enabled ? 'Disable' : 'Enable'} user ${u.username}`}>
                  {u.enabled ? 'Disable' : 'Enable'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function ApiKeys({ keys, own, reload }: { keys: ApiKey[]; own: boolean; reload: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('serving');
  const [corpora, setCorpora] = useState('');
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<ApiKey>();
  const [rowError, setRowError] = useState<unknown>();
  const [revoking, setRevoking] = useState<string>();

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const key = await api<ApiKey>('POST', '/v2/api_keys', { name, api_key_role: type, ...(type !== 'personal' && list(corpora).length ? { corpus_keys: list(corpora) } : {}) });
      setCreated(key);
      setName('');
      setCorpora('');
      reload();
    } catch (err) {
      setError(err);
    }
  }

  async function act(k: ApiKey, what: 'enable' | 'disable' | 'delete') {
    setRowError(undefined);
    try {
      if (what === 'delete') await api('DELETE', `/v2/api_keys/${encodeURIComponent(k.id)}`);
      else await api('PATCH', `/v2/api_keys/${encodeURIComponent(k.id)}`, { enabled: what === 'enable' });
      setRevoking(undefined);
      reload();
    } catch (err) {
      setRowError(err);
    }
  }

  return (
    <>
      {created && (
        <SecretOnce title={`New API key ${created.name}`} label="API key value" value={created.secret_key} onDone={() => setCreated(undefined)}>
          <p>
            Send it as the <code>x-api-key</code> header. Lost keys are not recovered: disable this one and create another.
          </p>
        </SecretOnce>
      )}
      <form class="card" onSubmit={submit} aria-labelledby="create-key">
        <h3 id="create-key">Create an API key</h3>
        <div class="row">
          <Field label="Key name" error={errorAt(error, 'name')}>
            {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <Field label="Key type" error={errorAt(error, 'api_key_role')}>
            {(id, d) => (
              <select id={id} aria-describedby={d} value={type} onChange={(e) => setType(e.currentTarget.value)}>
                <option value="serving">query (QueryService)</option>
                <option value="serving_and_indexing">query and index (IndexService)</option>
                <option value="personal">personal (your own roles)</option>
              </select>
            )}
          </Field>
          {type !== 'personal' && (
            <Field label="Corpora" error={errorAt(error, 'corpus_keys')} hint="comma-separated; every corpus when empty">
              {(id, d) => <input id={id} aria-describedby={d} value={corpora} onInput={(e) => setCorpora(e.currentTarget.value)} />}
            </Field>
          )}
        </div>
        <FormError error={error} placed={['name', 'api_key_role', 'corpus_keys']} />
        <button type="submit">Create key</button>
      </form>
      {own && <p class="status">Your own personal keys (this credential may not see other people's keys).</p>}
      <ErrorBox error={rowError} />
      <table aria-label="API keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Type</th>
            <th scope="col">Roles</th>
            <th scope="col">Owner</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <th scope="row">{k.name}</th>
              {/* The API's masked form (prefix and id, then ****): the value itself is never read again. */}
              <td>
                <code>{/_\*{4}$/.test(k.secret_key) ? k.secret_key : '****'}</code>
              </td>
              <td>{k.api_key_role}</td>
              <td>{rolesText(k)}</td>
              <td>{k.owner_username ?? ''}</td>
              <td>{k.enabled ? 'enabled' : 'disabled'}</td>
              <td>{when(k.created_at)}</td>
              <td>
                <div class="actions">
                  <button type="button" class="small" onClick={() => act(k, k.enabled ? 'disable' : 'enable')} aria-label={`${k.enabled ? 'Disable' : 'Enable'} key ${k.name}`}>
                    {k.enabled ? 'Disable' : 'Enable'}
                  </button>
                  {revoking === k.id ? (
                    <>
                      <button type="button" class="small danger" onClick={() => act(k, 'delete')} aria-label={`Confirm: revoke key ${k.name}`}>
                        Revoke for good
                      </button>
                      <button type="button" class="small" onClick={() => setRevoking(undefined)}>
                        Cancel
                      </button>
                    </>
                  ) : (
                    <button type="button" class="small" onClick={() => setRevoking(k.id)} aria-label={`Revoke key ${k.name}`}>
                      Revoke
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function AppClients({ clients, reload }: { clients: AppClient[]; reload: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [roles, setRoles] = useState(NO_ROLES);
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<AppClient>();
  const [rowError, setRowError] = useState<unknown>();
  const [deleting, setDeleting] = useState<string>();

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const client = await api<AppClient>('POST', '/v2/app_clients', { type: 'client_credentials', name, ...(description ? { description } : {}), ...grantsBody(roles) });
      setCreated(client);
      setName('');
      setDescription('');
      setRoles(NO_ROLES);
      reload();
    } catch (err) {
      setError(err);
    }
  }

  async function remove(c: AppClient) {
    setRowError(undefined);
    try {
      await api('DELETE', `/v2/app_clients/${encodeURIComponent(c.id)}`);
      setDeleting(undefined);
      reload();
    } catch (err) {
      setRowError(err);
    }
  }

  return (
    <>
      {created && (
        <SecretOnce title={`New app client ${created.name}`} label="Client secret" value={created.client_secret} onDone={() => setCreated(undefined)}>
          <p>
            Client id <code>{created.client_id}</code>. Exchange id and secret for a token at <code>POST /oauth2/token</code> (client credentials).
          </p>
        </SecretOnce>
      )}
      <form class="card" onSubmit={submit} aria-labelledby="create-client">
        <h3 id="create-client">Create an app client</h3>
        <div class="row">
          <Field label="Client name" error={errorAt(error, 'name')}>
            {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <Field label="Client description" error={errorAt(error, 'description')}>
            {(id, d) => <input id={id} aria-describedby={d} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
          </Field>
        </div>
        <RoleFields roles={roles} setRoles={setRoles} error={error} />
        <FormError error={error} placed={['name', 'description', 'api_roles', 'corpus_roles', 'agent_roles']} />
        <button type="submit">Create app client</button>
      </form>
      <ErrorBox error={rowError} />
      <table aria-label="App clients">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Client id</th>
            <th scope="col">Secret</th>
            <th scope="col">Roles</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {clients.map((c) => (
            <tr key={c.id}>
              <th scope="row">{c.name}</th>
              <td>
                <code>{c.client_id}</code>
              </td>
              {/* Whatever a list holds, a secret column shows the mask. */}
              <td>
                <code>****</code>
              </td>
              <td>{rolesText(c)}</td>
              <td>{when(c.created_at)}</td>
              <td>
                {deleting === c.id ? (
                  <div class="actions">
                    <button type="button" class="small danger" onClick={() => remove(c)} aria-label={`Confirm: delete app client ${c.name}`}>
                      Delete for good
                    </button>
                    <button type="button" class="small" onClick={() => setDeleting(undefined)}>
                      Cancel
                    </button>
                  </div>
                ) : (
                  <button type="button" class="small" onClick={() => setDeleting(c.id)} aria-label={`Delete app client ${c.name}`}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
