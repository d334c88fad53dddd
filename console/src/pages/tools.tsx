import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { mayWrite } from '../permissions';
import { ErrorBox, Field, Json, Loading, masked, Page, useLoad, when } from '../ui';

interface ToolConfiguration {
  key: string;
  name: string;
  type: string;
  description?: string | null;
  enabled?: boolean;
  created_at?: string;
  updated_at?: string;
  [setting: string]: unknown;
}
interface Tool {
  id: string;
  type: string;
  name: string;
  title?: string;
  description?: string;
  enabled?: boolean;
  server_id?: string;
  input_schema?: { properties?: Record<string, { type?: string; default?: unknown }>; required?: string[] };
  output_schema?: unknown;
  created_at?: string;
}
interface ToolServer {
  id: string;
  name: string;
  description?: string;
  uri: string;
  transport?: string;
  enabled?: boolean;
  auth?: Record<string, unknown> | null;
  created_at?: string;
}

/** The identity fields of a configuration (the form's own controls); every other field is the tool's settings. */
const IDENTITY = ['key', 'name', 'type', 'description', 'enabled', 'input_transform', 'output_transform', 'max_execution_time_seconds'];
const READ_ONLY = ['created_at', 'updated_at', 'metadata', 'enrichment_only'];

/** `field_errors` of one form: the control a path starts with, and whether every error found its control. */
function fieldErrors(error: unknown, controls: string[]) {
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const of = (k: string) => controls.find((c) => k === c || k.startsWith(`${c}.`) || k.startsWith(`${c}[`));
  const at = (control: string) =>
    Object.entries(fields)
      .filter(([k]) => of(k) === control)
      .map(([k, v]) => (k === control ? v : `${k}: ${v}`))
      .join('; ') || undefined;
  // One message per mistake: below the form only what no control shows.
  const placed = error instanceof ApiError && Object.keys(fields).length > 0 && Object.keys(fields).every((k) => of(k) !== undefined);
  return { at, placed };
}

/**
 * Tools (issue 48; docs/tools.md, docs/lambda-tools.md): reusable tool configurations, lambda tools with a test run
 * through the API's own route, MCP tool servers (credentials write-only) and the tools their syncs list. Each section
 * loads on its own; a credential refused all three lists gets one message. Writing is offered only when the API's
 * guard would allow it (one body-less probe, docs/console.md): all three share the `tool_config.manage` policy.
 */
export function ToolsPage() {
  const configs = useLoad(() => api<{ tool_configurations: ToolConfiguration[] }>('GET', '/v2/tool_configurations?limit=100'), []);
  const lambdas = useLoad(() => api<{ tools: Tool[] }>('GET', '/v2/tools?type=lambda&limit=100'), []);
  const servers = useLoad(() => api<{ tool_servers: ToolServer[] }>('GET', '/v2/tool_servers?limit=100'), []);
  const mayManage = useLoad(() => mayWrite('POST', '/v2/tool_configurations'), []);
  if (forbidden(configs.error) && forbidden(lambdas.error) && forbidden(servers.error))
    return (
      <Page title="Tools">
        <p class="notice" role="status">
          This credential may not use tools (the service answered 403 to the tool configurations, lambda tools and MCP tool servers). Sign in with the key of an owner, an administrator or an agent developer to configure tools.
        </p>
      </Page>
    );
  const manage = mayManage.data === true;
  return (
    <Page title="Tools">
      {mayManage.data === false && (
        <p class="notice" role="status">
          This credential may read tools but not create, change or test them.
        </p>
      )}
      <Section title="Tool configurations" id="tool-configurations" state={configs} refused="This credential may not read tool configurations.">
        {configs.data && <Configurations items={configs.data.tool_configurations} manage={manage} reload={configs.reload} />}
      </Section>
      <Section title="Lambda tools" id="lambda-tools" state={lambdas} refused="This credential may not read lambda tools.">
        {lambdas.data && <Lambdas items={lambdas.data.tools.filter((t) => t.type === 'lambda')} manage={manage} reload={lambdas.reload} />}
      </Section>
      <Section title="MCP tool servers" id="tool-servers" state={servers} refused="This credential may not read MCP tool servers.">
        {servers.data && <Servers items={servers.data.tool_servers} manage={manage} reload={servers.reload} />}
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

function Remove({ label, path, onDeleted }: { label: string; path: string; onDeleted: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>();
  async function remove() {
    setError(undefined);
    try {
      await api('DELETE', path);
      onDeleted();
    } catch (e) {
      setError(e);
      setConfirming(false);
    }
  }
  return (
    <>
      {confirming ? (
        <>
          <button type="button" class="small danger" onClick={remove} aria-label={`Confirm: delete ${label}`}>
            Delete {label}
          </button>
          <button type="button" class="small" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button type="button" class="small" onClick={() => setConfirming(true)} aria-label={`Delete ${label}`}>
          Delete
        </button>
      )}
      <ErrorBox error={error} />
    </>
  );
}

// ---- Tool configurations ----

function settingsOf(c: ToolConfiguration): Record<string, unknown> {
  return Object.fromEntries(Object.entries(c).filter(([k]) => !IDENTITY.includes(k) && !READ_ONLY.includes(k)));
}

function Configurations({ items, manage, reload }: { items: ToolConfiguration[]; manage: boolean; reload: () => void }) {
  const [editing, setEditing] = useState<ToolConfiguration>();
  return (
    <>
      {manage && !editing && <ConfigurationForm onSaved={reload} />}
      {manage && editing && (
        <ConfigurationForm
          key={editing.key}
          editing={editing}
          onSaved={() => (setEditing(undefined), reload())}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {items.length ? (
        <table aria-label="Tool configurations">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Settings</th>
              <th scope="col">Changed</th>
              {manage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.key}>
                <th scope="row">{c.key}</th>
                <td>
                  {c.name}
                  {c.description ? <div class="meta">{c.description}</div> : null}
                </td>
                <td>
                  <code>{c.type}</code>
                </td>
                <td>{c.enabled === false ? 'disabled' : 'enabled'}</td>
                <td>{Object.keys(settingsOf(c)).length || c.input_transform || c.output_transform ? <Json value={{ ...settingsOf(c), ...(c.input_transform ? { input_transform: c.input_transform } : {}), ...(c.output_transform ? { output_transform: c.output_transform } : {}) }} /> : <span class="meta">defaults</span>}</td>
                <td>{when(c.updated_at ?? c.created_at)}</td>
                {manage && (
                  <td>
                    <div class="row">
                      <button type="button" class="small" onClick={() => setEditing(c)} aria-label={`Edit ${c.key}`}>
                        Edit
                      </button>
                      <Remove label={c.key} path={`/v2/tool_configurations/${encodeURIComponent(c.key)}`} onDeleted={reload} />
                    </div>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No tool configuration yet{manage ? ': create one above' : ''}.</p>
      )}
    </>
  );
}

/** The built-in tool types a configuration can have (`GET /v2/tools`' built-ins), offered as suggestions. */
function useBuiltinTypes() {
  return useLoad(
    () =>
      api<{ tools: Tool[] }>('GET', '/v2/tools?limit=100').then((r) =>
        r.tools.filter((t) => t.id.startsWith('tol_builtin_') && t.type !== 'client').map((t) => (t.type === 'dynamic_vectara' ? t.name : t.type)),
      ),
    [],
  );
}

function ConfigurationForm({ editing, onSaved, onCancel }: { editing?: ToolConfiguration; onSaved: () => void; onCancel?: () => void }) {
  const types = useBuiltinTypes();
  // An edit starts from the API's values with anything secret-looking masked: unchanged settings are not sent back.
  const original = editing ? (masked(settingsOf(editing)) as Record<string, unknown>) : {};
  const [key, setKey] = useState(editing?.key ?? '');
  const [name, setName] = useState(editing?.name ?? '');
  const [type, setType] = useState(editing?.type ?? 'web_get');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [inputTransform, setInputTransform] = useState(String(editing?.input_transform ?? ''));
  const [outputTransform, setOutputTransform] = useState(String(editing?.output_transform ?? ''));
  const [timeout, setTimeoutSeconds] = useState(editing?.max_execution_time_seconds !== undefined ? String(editing.max_execution_time_seconds) : '');
  const [enabled, setEnabled] = useState(editing?.enabled !== false);
  const [settings, setSettings] = useState(Object.keys(original).length ? JSON.stringify(original, null, 2) : '');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const { at, placed } = fieldErrors(error, ['key', 'name', 'type', 'description', 'input_transform', 'output_transform', 'max_execution_time_seconds', 'enabled', 'settings']);
  // A tool's own settings (anything not a control above) are shown at the settings box.
  const settingsError = [at('settings'), ...(error instanceof ApiError ? Object.entries(error.fieldErrors).filter(([k]) => ![...IDENTITY, 'settings'].some((c) => k === c || k.startsWith(`${c}.`))).map(([k, v]) => `${k}: ${v}`) : [])].filter(Boolean).join('; ') || undefined;
  const allPlaced = placed || (error instanceof ApiError && Object.keys(error.fieldErrors).length > 0);

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    let parsed: Record<string, unknown> = {};
    if (settings.trim()) {
      try {
        parsed = JSON.parse(settings) as Record<string, unknown>;
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      } catch {
        setError(new ApiError(0, ['Settings must be a JSON object'], { settings: 'must be a JSON object, e.g. {"max_body_bytes": 65536}' }));
        return;
      }
    }
    // On an edit, a setting sent back unchanged (perhaps masked) is left out: the stored value is kept.
    const changed = editing ? Object.fromEntries(Object.entries(parsed).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(original[k]))) : parsed;
    const transforms = {
      ...(inputTransform.trim() ? { input_transform: inputTransform.trim() } : editing?.input_transform ? { input_transform: null } : {}),
      ...(outputTransform.trim() ? { output_transform: outputTransform.trim() } : editing?.output_transform ? { output_transform: null } : {}),
      ...(timeout.trim() ? { max_execution_time_seconds: Number(timeout) } : {}),
    };
    try {
      if (editing) {
        const saved = await api<ToolConfiguration>('PATCH', `/v2/tool_configurations/${encodeURIComponent(editing.key)}`, { ...changed, name, description: description || null, enabled, ...transforms });
        setDone(`Saved ${saved.key}.`);
      } else {
        const created = await api<ToolConfiguration>('POST', '/v2/tool_configurations', { ...parsed, ...(key.trim() ? { key: key.trim() } : {}), name, type, ...(description ? { description } : {}), enabled, ...transforms });
        setDone(`Created ${created.key}.`);
        setKey('');
        setName('');
        setDescription('');
        setInputTransform('');
        setOutputTransform('');
        setTimeoutSeconds('');
        setSettings('');
      }
      onSaved();
    } catch (err) {
      setError(err);
    }
  }

  const title = editing ? `Edit tool configuration ${editing.key}` : 'Create a tool configuration';
  const titleId = editing ? 'edit-tool-configuration' : 'create-tool-configuration';
  return (
    <form class="card" onSubmit={submit} aria-labelledby={titleId}>
      <h3 id={titleId}>{title}</h3>
      <div class="row">
        {!editing && (
          <Field label="Key" error={at('key')} hint="optional: made from the name">
            {(id, d) => <input id={id} aria-describedby={d} value={key} onInput={(e) => setKey(e.currentTarget.value)} autoComplete="off" />}
          </Field>
        )}
        <Field label="Name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Tool type" error={at('type')} hint={editing ? 'a type never changes' : 'a built-in tool type'}>
          {(id, d) => (
            <>
              <input id={id} aria-describedby={d} required list={`${id}-types`} value={type} readOnly={!!editing} onInput={(e) => setType(e.currentTarget.value)} autoComplete="off" />
              <datalist id={`${id}-types`}>
                {(types.data ?? []).map((t) => (
                  <option key={t} value={t} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
        </label>
      </div>
      <Field label="Description" error={at('description')}>
        {(id, d) => <input id={id} aria-describedby={d} class="wide" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
      </Field>
      <div class="row">
        <Field label="Input transform" error={at('input_transform')} hint="jq over the call's input">
          {(id, d) => <input id={id} aria-describedby={d} value={inputTransform} onInput={(e) => setInputTransform(e.currentTarget.value)} autoComplete="off" spellcheck={false} />}
        </Field>
        <Field label="Output transform" error={at('output_transform')} hint="jq over the result">
          {(id, d) => <input id={id} aria-describedby={d} value={outputTransform} onInput={(e) => setOutputTransform(e.currentTarget.value)} autoComplete="off" spellcheck={false} />}
        </Field>
        <Field label="Time limit (seconds)" error={at('max_execution_time_seconds')} hint="1–3600; empty: none">
          {(id, d) => <input id={id} aria-describedby={d} type="number" min={1} max={3600} value={timeout} onInput={(e) => setTimeoutSeconds(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Settings (JSON)" error={settingsError} hint={'the tool type\'s own fields, e.g. {"max_body_bytes": 65536} for web_get'}>
        {(id, d) => <textarea id={id} aria-describedby={d} rows={4} value={settings} onInput={(e) => setSettings(e.currentTarget.value)} spellcheck={false} />}
      </Field>
      {!allPlaced && <ErrorBox error={error} />}
      {done && <p role="status">{done}</p>}
      <div class="row">
        <button type="submit">{editing ? 'Save configuration' : 'Create configuration'}</button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

// ---- Lambda tools ----

const SAMPLE = `def process(name: str, times: int = 1) -> dict:
    """Greets someone.

    Args:
        name: Who to greet.
        times: How many times.
    """
    if times < 1:
        raise ValueError("times must be at least 1")
    return {"greeting": " ".join(["Hello, " + name + "!"] * times)}
`;

function Lambdas({ items, manage, reload }: { items: Tool[]; manage: boolean; reload: () => void }) {
  return (
    <>
      {manage && <LambdaForm onCreated={reload} />}
      {items.length ? (
        <ul class="plain">
          {items.map((t) => (
            <LambdaItem key={t.id} tool={t} manage={manage} reload={reload} />
          ))}
        </ul>
      ) : (
        <p>No lambda tool yet{manage ? ': create one above' : ''}.</p>
      )}
    </>
  );
}

/** A test input to start from: each argument of the discovered schema with its default or an empty value of its type. */
function sampleInput(tool: Tool): string {
  const props = tool.input_schema?.properties ?? {};
  const empty: Record<string, unknown> = { string: '', integer: 0, number: 0, boolean: false, array: [], object: {} };
  return JSON.stringify(Object.fromEntries(Object.entries(props).map(([k, p]) => [k, p.default ?? empty[p.type ?? 'string'] ?? null])), null, 2);
}

function LambdaItem({ tool, manage, reload }: { tool: Tool; manage: boolean; reload: () => void }) {
  const [input, setInput] = useState(() => sampleInput(tool));
  const [run, setRun] = useState<{ running?: boolean; result?: { type: string; output?: unknown; error?: { message?: string; traceback?: string } }; error?: unknown }>({});
  const args = Object.entries(tool.input_schema?.properties ?? {}).map(([k, p]) => `${k}: ${p.type ?? 'any'}${tool.input_schema?.required?.includes(k) ? '' : '?'}`);

  async function test(e: Event) {
    e.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(input || '{}');
    } catch {
      setRun({ error: new Error('The test input must be a JSON object') });
      return;
    }
    setRun({ running: true });
    try {
      setRun({ result: await api('POST', `/v2/tools/${encodeURIComponent(tool.id)}/test`, { input: parsed }) });
    } catch (err) {
      // The sandbox unavailable on this host is a 503 whose message says what the operator must provide.
      setRun({ error: err });
    }
  }

  return (
    <li class="card" aria-labelledby={`${tool.id}-title`}>
      <div class="page-header">
        <h3 id={`${tool.id}-title`}>
          {tool.title ?? tool.name} <code class="meta">{tool.id}</code>
        </h3>
        {manage && (
          <div class="row">
            <Remove label={tool.name} path={`/v2/tools/${encodeURIComponent(tool.id)}`} onDeleted={reload} />
          </div>
        )}
      </div>
      <p>{tool.description}</p>
      <p class="meta">
        process({args.join(', ')}){tool.enabled === false ? ' · disabled' : ''}
        {tool.created_at ? ` · created ${when(tool.created_at)}` : ''}
      </p>
      {manage && (
        <form onSubmit={test} aria-label={`Test ${tool.name}`}>
          <Field label={`Test input for ${tool.name} (JSON)`}>
            {(id, d) => (
              <textarea
                id={id}
                aria-describedby={d}
                rows={3}
                value={input}
                onInput={(e) => setInput(e.currentTarget.value)}
                onKeyDown={(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && test(e)}
                spellcheck={false}
              />
            )}
          </Field>
          <button type="submit" disabled={run.running}>
            {run.running ? 'Running…' : 'Run test'}
          </button>
          <span class="hint"> Ctrl+Enter runs it from the input.</span>
        </form>
      )}
      <div role="region" aria-live="polite" aria-label={`Test run of ${tool.name}`}>
        {run.result?.type === 'success' && (
          <>
            <p class="status">Output:</p>
            <Json value={run.result.output} />
          </>
        )}
        {run.result?.type === 'error' && (
          <>
            <p class="error">Error: {run.result.error?.message ?? 'the lambda failed'}</p>
            {run.result.error?.traceback && <pre class="json" tabIndex={0}>{run.result.error.traceback}</pre>}
          </>
        )}
        <ErrorBox error={run.error} />
      </div>
    </li>
  );
}

function LambdaForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [code, setCode] = useState(SAMPLE);
  const [timeout, setTimeoutSeconds] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();
  const { at, placed } = fieldErrors(error, ['name', 'description', 'code', 'execution_configuration', 'tool_configurations', 'title']);

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    setBusy(true);
    try {
      const created = await api<Tool>('POST', '/v2/tools', {
        type: 'lambda',
        name: name.trim(),
        description,
        code,
        ...(timeout.trim() ? { execution_configuration: { max_execution_time_seconds: Number(timeout) } } : {}),
      });
      setDone(`Created ${created.id}: test it below.`);
      setName('');
      setDescription('');
      setCode(SAMPLE);
      onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-lambda">
      <h3 id="create-lambda">Create a lambda tool</h3>
      <div class="row">
        <Field label="Tool name" error={at('name')} hint="its id: tol_<name>">
          {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Time limit (seconds)" error={at('execution_configuration')} hint="optional">
          {(id, d) => <input id={id} aria-describedby={d} type="number" min={1} value={timeout} onInput={(e) => setTimeoutSeconds(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Description" error={at('description')} hint="what the model reads to decide when to call it">
        {(id, d) => <input id={id} aria-describedby={d} class="wide" required value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
      </Field>
      <Field label="Python code" error={at('code')} hint="Python 3.12: a process(**arguments) function; its annotations give the input schema">
        {(id, d) => <textarea id={id} aria-describedby={d} rows={10} required value={code} onInput={(e) => setCode(e.currentTarget.value)} spellcheck={false} />}
      </Field>
      {!placed && <ErrorBox error={error} />}
      {done && <p role="status">{done}</p>}
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create lambda'}
      </button>
    </form>
  );
}

// ---- MCP tool servers ----

function authText(auth: Record<string, unknown> | null | undefined): string {
  if (!auth) return 'none';
  const { type, ...rest } = masked(auth) as Record<string, unknown>;
  const parts = Object.entries(rest).map(([k, v]) => `${k} ${String(v)}`);
  return parts.length ? `${String(type)} (${parts.join(', ')})` : String(type);
}

function Servers({ items, manage, reload }: { items: ToolServer[]; manage: boolean; reload: () => void }) {
  return (
    <>
      {manage && <ServerForm onRegistered={reload} />}
      {items.length ? (
        <ul class="plain">
          {items.map((s) => (
            <ServerItem key={s.id} server={s} manage={manage} reload={reload} />
          ))}
        </ul>
      ) : (
        <p>No MCP tool server yet{manage ? ': register one above' : ''}.</p>
      )}
    </>
  );
}

function ServerItem({ server, manage, reload }: { server: ToolServer; manage: boolean; reload: () => void }) {
  const tools = useLoad(() => api<{ tools: Tool[] }>('GET', `/v2/tools?tool_server_id=${encodeURIComponent(server.id)}&limit=100`), [server.id]);
  const [sync, setSync] = useState<{ running?: boolean; error?: unknown }>({});

  async function runSync() {
    setSync({ running: true });
    try {
      await api('POST', `/v2/tool_servers/${encodeURIComponent(server.id)}/sync`);
      setSync({});
      tools.reload();
    } catch (e) {
      setSync({ error: e });
    }
  }

  return (
    <li class="card" aria-labelledby={`${server.id}-title`}>
      <div class="page-header">
        <h3 id={`${server.id}-title`}>
          {server.name} <code class="meta">{server.id}</code>
        </h3>
        {manage && (
          <div class="row">
            <button type="button" class="small" onClick={runSync} disabled={sync.running} aria-label={`Sync tools of ${server.name}`}>
              {sync.running ? 'Syncing…' : 'Sync tools'}
            </button>
            <Remove label={server.name} path={`/v2/tool_servers/${encodeURIComponent(server.id)}`} onDeleted={reload} />
          </div>
        )}
      </div>
      <p class="meta">
        <code>{server.uri}</code> · {server.transport ?? 'streamable-http'} · auth {authText(server.auth)}
        {server.enabled === false ? ' · disabled' : ''}
      </p>
      <ErrorBox error={sync.error} />
      <ErrorBox error={tools.error} />
      {tools.loading && !tools.data ? (
        <Loading what="its tools" />
      ) : tools.data?.tools.length ? (
        <table aria-label={`Tools of ${server.name}`}>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Description</th>
              <th scope="col">Arguments</th>
              <th scope="col">Id</th>
            </tr>
          </thead>
          <tbody>
            {tools.data.tools.map((t) => (
              <tr key={t.id}>
                <th scope="row">{t.name}</th>
                <td>{t.description}</td>
                <td>{Object.keys(t.input_schema?.properties ?? {}).join(', ') || 'none'}</td>
                <td>
                  <code>{t.id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        tools.data && <p>No tools listed yet{manage ? ': Sync tools asks the server for them' : ''}.</p>
      )}
    </li>
  );
}

const AUTHS: Record<string, { label: string; fields: { name: string; label: string; secret?: boolean }[] }> = {
  none: { label: 'none', fields: [] },
  bearer: { label: 'bearer token', fields: [{ name: 'token', label: 'Bearer token', secret: true }] },
  header: {
    label: 'custom header',
    fields: [
      { name: 'header', label: 'Header name' },
      { name: 'value', label: 'Header value', secret: true },
    ],
  },
};

function ServerForm({ onRegistered }: { onRegistered: () => void }) {
  const [name, setName] = useState('');
  const [uri, setUri] = useState('');
  const [transport, setTransport] = useState('streamable-http');
  const [authType, setAuthType] = useState('none');
  // Credential fields live only in this state until the request is sent; never stored, never shown back.
  const [auth, setAuth] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();
  const { at, placed } = fieldErrors(error, ['name', 'uri', 'transport', 'auth']);

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    setBusy(true);
    try {
      const created = await api<ToolServer>('POST', '/v2/tool_servers', {
        type: 'mcp',
        name,
        uri: uri.trim(),
        transport,
        ...(authType !== 'none' ? { auth: { type: authType, ...Object.fromEntries(AUTHS[authType].fields.map((f) => [f.name, auth[f.name] ?? ''])) } } : {}),
      });
      setName('');
      setUri('');
      setAuthType('none');
      // Registered: ask the server for its tools at once (a server that cannot be reached says why, and stays registered).
      try {
        await api('POST', `/v2/tool_servers/${encodeURIComponent(created.id)}/sync`);
        setDone(`Registered ${created.name} and listed its tools.`);
      } catch (err) {
        setDone(`Registered ${created.name}, but listing its tools failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      onRegistered();
    } catch (err) {
      setError(err);
    } finally {
      // Whatever the answer, the credential leaves the page: a refused registration asks for it again.
      setAuth({});
      setBusy(false);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="register-tool-server">
      <h3 id="register-tool-server">Register an MCP tool server</h3>
      <div class="row">
        <Field label="Server name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Transport" error={at('transport')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={transport} onChange={(e) => setTransport(e.currentTarget.value)}>
              <option value="streamable-http">streamable HTTP</option>
              <option value="sse">SSE</option>
            </select>
          )}
        </Field>
      </div>
      <Field label="Server URL" error={at('uri')} hint="e.g. https://mcp.example.com/mcp">
        {(id, d) => <input id={id} aria-describedby={d} class="wide" required value={uri} onInput={(e) => setUri(e.currentTarget.value)} autoComplete="off" />}
      </Field>
      <div class="row">
        <Field label="Authentication" error={fields(error, 'auth') ?? fields(error, 'auth.type')}>
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
          <Field key={f.name} label={f.label} error={fields(error, `auth.${f.name}`)} hint={f.secret ? 'sent once, stored encrypted, never shown again' : undefined}>
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
      {!placed && <ErrorBox error={error} />}
      {done && <p role="status">{done}</p>}
      <button type="submit" disabled={busy}>
        {busy ? 'Registering…' : 'Register server'}
      </button>
    </form>
  );
}

const fields = (error: unknown, path: string): string | undefined => (error instanceof ApiError ? error.fieldErrors[path] : undefined);
