import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { ErrorBox, Field, href, Loading, Page, useLoad, when } from '../ui';

type Targets = { type: 'single'; agent_key: string } | { type: 'weighted'; partition_by: string; options: { agent_key: string; weight: number }[] };
interface Rule {
  match?: string;
  targets: Targets;
}
interface Policy {
  type: 'routed';
  rules: Rule[];
  end_user_metadata?: string[];
}
interface Alias {
  key: string;
  name: string;
  description?: string | null;
  policy: Policy;
  enabled: boolean;
  updated_at?: string;
}

/** A rule as the form edits it: both kinds of targets kept, so switching back and forth loses nothing. */
interface RuleDraft {
  match: string;
  kind: 'single' | 'weighted';
  agent: string;
  partition: string;
  options: { agent: string; weight: string }[];
}

const draftOf = (r: Rule): RuleDraft => ({
  match: r.match ?? '',
  kind: r.targets.type,
  agent: r.targets.type === 'single' ? r.targets.agent_key : (r.targets.options[0]?.agent_key ?? ''),
  partition: r.targets.type === 'weighted' ? r.targets.partition_by : "get('$.session.key', '')",
  options: r.targets.type === 'weighted' ? r.targets.options.map((o) => ({ agent: o.agent_key, weight: String(o.weight) })) : [{ agent: r.targets.agent_key, weight: '100' }],
});

const ruleOf = (d: RuleDraft): Rule => ({
  ...(d.match.trim() ? { match: d.match.trim() } : {}),
  targets:
    d.kind === 'single'
      ? { type: 'single', agent_key: d.agent }
      : { type: 'weighted', partition_by: d.partition, options: d.options.map((o) => ({ agent_key: o.agent, weight: o.weight.trim() === '' ? NaN : Number(o.weight) })) },
});

/** The routing in words: each rule's condition and where it sends a session, weights as shares. */
export function routing(policy: Policy): string[] {
  return policy.rules.map((r) => {
    const when = r.match ? `when ${r.match}` : 'otherwise';
    if (r.targets.type === 'single') return `${when} → ${r.targets.agent_key}`;
    const total = r.targets.options.reduce((n, o) => n + o.weight, 0) || 1;
    return `${when} → ${r.targets.options.map((o) => `${o.agent_key} ${Math.round((o.weight / total) * 100)}%`).join(', ')} (by ${r.targets.partition_by})`;
  });
}

/**
 * Each field error goes to the first control that asks for it (the most specific asks first), so a message is
 * shown once; `rest()` is what no control took, shown below the form.
 */
function claims(error: unknown) {
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const taken = new Set<string>();
  const at = (...prefixes: string[]) => {
    const hit = Object.entries(fields).find(([k]) => !taken.has(k) && prefixes.some((p) => k === p || k.startsWith(`${p}.`) || k.startsWith(`${p}[`)));
    if (!hit) return undefined;
    taken.add(hit[0]);
    return hit[1];
  };
  const rest = () => (error && Object.keys(fields).every((k) => !taken.has(k)) ? error : undefined);
  return { at, rest };
}

export function AliasesPage({ alias }: { alias?: string }) {
  // Read again on each return to the list (an alias edited or deleted on its own page meanwhile).
  const list = useLoad(() => (alias ? Promise.resolve(undefined) : api<{ aliases: Alias[] }>('GET', '/v2/agent_aliases?limit=100')), [alias]);
  if (alias) return <AliasPage alias={alias} />;
  if (forbidden(list.error))
    return (
      <Page title="Aliases">
        <p class="notice" role="status">
          This credential may not use agent aliases (the service answered 403 to the list of aliases). Aliases need an agent role.
        </p>
      </Page>
    );
  return (
    <Page title="Aliases">
      <p class="hint">An alias is a stable name in front of agents: its rules pick the agent of each session created through it (docs/aliases.md).</p>
      <AliasForm onSaved={(key) => (location.hash = href('aliases', key))} />
      <h2>All aliases</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="aliases" />
      ) : list.data?.aliases.length ? (
        <table aria-label="Aliases">
          <thead>
            <tr>
              <th scope="col">Alias</th>
              <th scope="col">Routing</th>
              <th scope="col">Enabled</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.aliases.map((a) => (
              <tr key={a.key}>
                <td>
                  <a href={href('aliases', a.key)}>{a.name}</a> <small>{a.key}</small>
                </td>
                <td>
                  {routing(a.policy).map((line, i) => (
                    <div key={i}>{line}</div>
                  ))}
                </td>
                <td>{a.enabled ? 'yes' : 'no'}</td>
                <td>{when(a.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        list.data && <p>No aliases yet: create one above.</p>
      )}
    </Page>
  );
}

function AliasPage({ alias }: { alias: string }) {
  const path = `/v2/agent_aliases/${encodeURIComponent(alias)}`;
  const loaded = useLoad(() => api<Alias>('GET', path), [path]);
  const [error, setError] = useState<unknown>();
  const [deleting, setDeleting] = useState(false);
  const [saved, setSaved] = useState(false);

  async function remove() {
    setError(undefined);
    try {
      await api('DELETE', path);
      location.hash = href('aliases');
    } catch (err) {
      setError(err);
      setDeleting(false);
    }
  }

  return (
    <Page title={`Alias ${alias}`} actions={<a href={href('aliases')}>All aliases</a>}>
      {forbidden(loaded.error) ? (
        <p class="notice" role="status">
          This credential may not read this alias (the service answered 403).
        </p>
      ) : (
        <ErrorBox error={loaded.error} />
      )}
      {loaded.loading && !loaded.data && <Loading what="the alias" />}
      {loaded.data && (
        <>
          <h2>Routing</h2>
          <ol aria-label="Routing rules">
            {routing(loaded.data.policy).map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ol>
          {saved && <p role="status">Saved the alias.</p>}
          <AliasForm
            key={loaded.data.updated_at}
            existing={loaded.data}
            onSaved={() => {
              setSaved(true);
              loaded.reload();
            }}
          />
          <ErrorBox error={error} />
          <div class="row">
            {deleting ? (
              <>
                <button type="button" class="danger" onClick={remove}>
                  Delete {alias} for good
                </button>
                <button type="button" class="secondary" onClick={() => setDeleting(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" class="secondary" onClick={() => (setDeleting(true), setSaved(false))}>
                Delete alias
              </button>
            )}
          </div>
        </>
      )}
    </Page>
  );
}

/**
 * Create an alias, or edit one: name, description and enabled go by PATCH (agent developer), a changed policy by
 * `PUT …/policy` (agent administrator of every agent involved): the API's answer to each is shown as it is.
 */
function AliasForm({ existing, onSaved }: { existing?: Alias; onSaved: (key: string) => void }) {
  const agents = useLoad(() => api<{ agents: { key: string; name: string }[] }>('GET', '/v2/agents?limit=100'), []);
  const firstAgent = agents.data?.agents[0]?.key ?? '';
  const [key, setKey] = useState('');
  const [name, setName] = useState(existing?.name ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [rules, setRules] = useState<RuleDraft[]>(existing ? existing.policy.rules.map(draftOf) : [{ match: '', kind: 'single', agent: '', partition: "get('$.session.key', '')", options: [{ agent: '', weight: '100' }] }]);
  const [error, setError] = useState<unknown>();
  const [partial, setPartial] = useState(false);
  const { at, rest } = claims(error);
  // An agent not chosen yet is the first in the list (the select shows it).
  const filled = rules.map((r) => ({ ...r, agent: r.agent || firstAgent, options: r.options.map((o) => ({ ...o, agent: o.agent || firstAgent })) }));
  const change = (i: number, patch: Partial<RuleDraft>) => setRules((rs) => rs.map((r, j) => (j === i ? { ...filled[j], ...patch } : r)));

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    setPartial(false);
    let patched = false;
    const policy: Policy = { ...(existing?.policy ?? {}), type: 'routed', rules: filled.map(ruleOf) };
    try {
      if (!existing) {
        const created = await api<Alias>('POST', '/v2/agent_aliases', { key, name: name || key, ...(description ? { description } : {}), enabled, policy });
        onSaved(created.key);
        return;
      }
      const path = `/v2/agent_aliases/${encodeURIComponent(existing.key)}`;
      if (name !== existing.name || (description || null) !== (existing.description ?? null) || enabled !== existing.enabled) {
        await api('PATCH', path, { name, description: description || null, enabled });
        patched = true;
      }
      if (JSON.stringify(policy.rules) !== JSON.stringify(existing.policy.rules)) await api('PUT', `${path}/policy`, { policy });
      onSaved(existing.key);
    } catch (err) {
      setError(err);
      // Two requests, two rights: say what the first one saved when the second is refused.
      setPartial(patched);
    }
  }

  const agentSelect = (label: string, value: string, set: (v: string) => void, error?: string) => (
    <Field label={label} error={error}>
      {(id, d) =>
        agents.data ? (
          <select id={id} aria-describedby={d} value={value} onChange={(e) => set(e.currentTarget.value)}>
            {agents.data.agents.map((a) => (
              <option key={a.key} value={a.key}>
                {a.key}
              </option>
            ))}
            {value && !agents.data.agents.some((a) => a.key === value) && <option value={value}>{value}</option>}
          </select>
        ) : (
          <input id={id} aria-describedby={d} value={value} onInput={(e) => set(e.currentTarget.value)} />
        )
      }
    </Field>
  );

  return (
    <form class="card" onSubmit={submit} aria-labelledby="alias-form">
      <h2 id="alias-form">{existing ? 'Edit this alias' : 'Create an alias'}</h2>
      <div class="row">
        {!existing && (
          <Field label="Alias key" error={at('key')} hint="letters, digits, _ and -">
            {(id, d) => <input id={id} aria-describedby={d} required value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
          </Field>
        )}
        <Field label="Alias name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Description" error={at('description')}>
          {(id, d) => <input id={id} aria-describedby={d} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
        </label>
      </div>
      <h3 class="section">Routing rules</h3>
      <p class="hint">The first rule whose condition holds picks the agent; a rule without a condition catches the rest and comes last.</p>
      {filled.map((r, i) => {
        const p = `policy.rules[${i}]`;
        return (
          <div key={i} class="card rule" role="group" aria-label={`Rule ${i + 1}`}>
            <div class="row">
              <Field label="Condition" error={at(`${p}.match`)} hint="empty: every session">
                {(id, d) => <input id={id} aria-describedby={d} class="wide" value={r.match} placeholder="get('$.session.metadata.tier', '') == 'gold'" onInput={(e) => change(i, { match: e.currentTarget.value })} />}
              </Field>
              <Field label="Send to" error={at(`${p}.targets.type`)}>
                {(id, d) => (
                  <select id={id} aria-describedby={d} value={r.kind} onChange={(e) => change(i, { kind: e.currentTarget.value as RuleDraft['kind'] })}>
                    <option value="single">one agent</option>
                    <option value="weighted">agents by weight</option>
                  </select>
                )}
              </Field>
              {r.kind === 'single' && agentSelect('Agent', r.agent, (v) => change(i, { agent: v }), at(`${p}.targets.agent_key`))}
              {r.kind === 'weighted' && (
                <Field label="Split by" error={at(`${p}.targets.partition_by`)} hint="one value, one agent">
                  {(id, d) => <input id={id} aria-describedby={d} value={r.partition} onInput={(e) => change(i, { partition: e.currentTarget.value })} />}
                </Field>
              )}
            </div>
            {r.kind === 'weighted' && (
              <>
                {r.options.map((o, j) => (
                  <div class="row" key={j}>
                    {agentSelect(`Agent ${j + 1}`, o.agent, (v) => change(i, { options: r.options.map((x, k) => (k === j ? { ...x, agent: v } : x)) }), at(`${p}.targets.options[${j}].agent_key`))}
                    <Field label={`Weight ${j + 1}`} error={at(`${p}.targets.options[${j}]`)}>
                      {(id, d) => <input id={id} aria-describedby={d} type="number" min={0} step={1} value={o.weight} onInput={(e) => change(i, { options: r.options.map((x, k) => (k === j ? { ...x, weight: e.currentTarget.value } : x)) })} />}
                    </Field>
                    {r.options.length > 1 && (
                      <button type="button" class="small" onClick={() => change(i, { options: r.options.filter((_, k) => k !== j) })}>
                        Remove agent {j + 1}
                      </button>
                    )}
                  </div>
                ))}
                <button type="button" class="small" onClick={() => change(i, { options: [...r.options, { agent: '', weight: '0' }] })}>
                  Add an agent to rule {i + 1}
                </button>
              </>
            )}
            {(() => {
              // What is left for this rule as a whole (no weight above 0, unreachable after a catch-all).
              const whole = at(p);
              return (
                whole && (
                  <p class="field-error" role="alert">
                    Rule {i + 1}: {whole}
                  </p>
                )
              );
            })()}
            {filled.length > 1 && (
              <p>
                <button type="button" class="small" onClick={() => setRules(filled.filter((_, k) => k !== i))}>
                  Remove rule {i + 1}
                </button>
              </p>
            )}
          </div>
        );
      })}
      <button type="button" class="small" onClick={() => setRules([...filled, { match: '', kind: 'single', agent: '', partition: "get('$.session.key', '')", options: [{ agent: '', weight: '100' }] }])}>
        Add a rule
      </button>
      {partial && <p role="status">Saved the name, description and enabled; the routing was not changed.</p>}
      <ErrorBox error={rest()} />
      <div class="row">
        <button type="submit">{existing ? 'Save alias' : 'Create alias'}</button>
      </div>
    </form>
  );
}
