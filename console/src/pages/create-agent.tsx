import { useState } from 'preact/hooks';
import { api, ApiError, forbidden } from '../api';
import { ErrorBox, Field, href, useLoad } from '../ui';

/**
 * A one-step agent from a form: a registered model, instructions as plain text, and optionally a
 * `corpora_search` tool over the chosen corpora. Anything richer (more steps, other tools) is edited on the
 * agent's page afterwards, so a new user can chat without writing JSON first.
 */
export function CreateAgent({ onCreated }: { onCreated: () => void }) {
  // A refused list is not an empty one: "no model is registered" would be false for a credential that may not read them.
  const llms = useLoad(() => api<{ llms: { name: string }[] }>('GET', '/v2/llms?limit=100'), []);
  const corpora = useLoad(() => api<{ corpora: { key: string }[] }>('GET', '/v2/corpora?limit=100').catch(() => ({ corpora: [] })), []);
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [instructions, setInstructions] = useState('You are a helpful assistant. Answer from the documents you search.');
  const [search, setSearch] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const at = (prefix: string) => Object.entries(fields).find(([k]) => k === prefix || k.startsWith(`${prefix}.`))?.[1];
  const chosenModel = model || llms.data?.llms[0]?.name || '';

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    const tools = search.length ? { search: { type: 'corpora_search', query_configuration: { search: { corpora: search.map((corpus_key) => ({ corpus_key })), limit: 5 } } } } : {};
    try {
      const created = await api<{ key: string }>('POST', '/v2/agents', {
        ...(key ? { key } : {}),
        name: name || key,
        model: { name: chosenModel },
        tool_configurations: tools,
        first_step_name: 'main',
        steps: { main: { instructions: instructions.trim() ? [{ type: 'inline', template_type: 'text', template: instructions }] : [] } },
      });
      onCreated();
      location.hash = href('agents', created.key);
    } catch (err) {
      setError(err);
    }
  }

  if (forbidden(llms.error))
    return (
      <p class="notice" role="status">
        This credential may not read the registered language models, so it cannot create agents here; the agents it may see are listed below.
      </p>
    );
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-agent">
      <h2 id="create-agent">Create an agent</h2>
      {llms.data && !llms.data.llms.length && (
        <p class="notice">
          No language model is registered yet: register one on the <a href="#/models">Models</a> page (any OpenAI-compatible server), then create the agent.
        </p>
      )}
      <div class="row">
        <Field label="Agent key" error={at('key')}>
          {(id, d) => <input id={id} aria-describedby={d} value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
        </Field>
        <Field label="Agent name" error={at('name')}>
          {(id, d) => <input id={id} aria-describedby={d} required={!key} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Language model" error={at('model')}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={chosenModel} onChange={(e) => setModel(e.currentTarget.value)}>
              {llms.data?.llms.map((l) => <option key={l.name}>{l.name}</option>)}
            </select>
          )}
        </Field>
      </div>
      <Field label="Instructions" error={at('steps')}>
        {(id, d) => <textarea id={id} aria-describedby={d} rows={3} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />}
      </Field>
      {corpora.data?.corpora.length ? (
        <fieldset class="row">
          <legend>Search these corpora (a corpora_search tool)</legend>
          {corpora.data.corpora.map((c) => (
            <label class="check" key={c.key}>
              <input type="checkbox" checked={search.includes(c.key)} onChange={(e) => setSearch((s) => (e.currentTarget.checked ? [...s, c.key] : s.filter((k) => k !== c.key)))} /> {c.key}
            </label>
          ))}
        </fieldset>
      ) : null}
      <ErrorBox error={error} />
      <button type="submit" disabled={!chosenModel}>
        Create agent
      </button>
    </form>
  );
}
