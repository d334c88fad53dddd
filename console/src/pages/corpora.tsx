import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { mayWrite } from '../permissions';
import { ErrorBox, Field, href, Loading, Page, useLoad, when } from '../ui';

interface Corpus {
  key: string;
  name: string;
  description?: string;
  enabled?: boolean;
  created_at?: string;
  limits?: unknown;
}

export function CorporaPage() {
  const list = useLoad(() => api<{ corpora: Corpus[] }>('GET', '/v2/corpora?limit=100'), []);
  // Whether to offer the form at all is the API's answer, not a guess: a query-only key was offered it and told 403 on submit.
  const mayCreate = useLoad(() => mayWrite('POST', '/v2/corpora'), []);
  return (
    <Page title="Corpora">
      {mayCreate.data === true ? (
        <CreateCorpus onCreated={list.reload} />
      ) : mayCreate.data === false ? (
        <p class="notice" role="status">
          This credential may not create corpora (the service refuses it); it sees the corpora it may read below.
        </p>
      ) : null}
      <h2>All corpora</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="corpora" />
      ) : list.data?.corpora.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.corpora.map((c) => (
              <tr key={c.key}>
                <td>
                  <a href={href('corpora', c.key)}>{c.key}</a>
                </td>
                <td>{c.name}</td>
                <td>{c.description}</td>
                <td>{when(c.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>{mayCreate.data === false ? 'No corpus this credential may read.' : 'No corpora yet: create one above.'}</p>
      )}
    </Page>
  );
}

/** `doc.lang, part.page:integer` → the reference's filter attribute objects; the service validates the rest. */
function parseAttributes(text: string) {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const [qualified, type = 'text'] = t.split(':').map((x) => x.trim());
      const [prefix, ...rest] = qualified.split('.');
      const level = prefix === 'part' ? 'part' : 'document';
      return { name: prefix === 'doc' || prefix === 'part' ? rest.join('.') : qualified, level, type, indexed: true };
    });
}

function CreateCorpus({ onCreated }: { onCreated: () => void }) {
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [attributes, setAttributes] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const filter_attributes = parseAttributes(attributes);
      const created = await api<Corpus>('POST', '/v2/corpora', { key, name: name || key, ...(description ? { description } : {}), ...(filter_attributes.length ? { filter_attributes } : {}) });
      setDone(created.key);
      setKey('');
      setName('');
      setDescription('');
      setAttributes('');
      onCreated();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-corpus">
      <h2 id="create-corpus">Create a corpus</h2>
      <div class="row">
        <Field label="Key" error={fields.key} hint="letters, digits, _ and -">
          {(id, d) => <input id={id} aria-describedby={d} required value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
        </Field>
        <Field label="Name" error={fields.name}>
          {(id, d) => <input id={id} aria-describedby={d} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Description" error={fields.description}>
          {(id, d) => <input id={id} aria-describedby={d} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Filter attributes" error={Object.entries(fields).find(([k]) => k.startsWith('filter_attributes'))?.[1]} hint="e.g. doc.lang, doc.year:integer, part.page:integer (type text when not given)">
        {(id, d) => <input id={id} aria-describedby={d} class="wide" value={attributes} onInput={(e) => setAttributes(e.currentTarget.value)} />}
      </Field>
      <ErrorBox error={error} />
      {done && (
        <p role="status">
          Created <a href={href('corpora', done)}>{done}</a>.
        </p>
      )}
      <button type="submit">Create corpus</button>
    </form>
  );
}
