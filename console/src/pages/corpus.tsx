import { useState } from 'preact/hooks';
import { api, ApiError, qs, upload } from '../api';
import { ErrorBox, Field, href, Loading, Page, useLoad } from '../ui';

interface DocumentRow {
  id: string;
  metadata?: Record<string, unknown>;
  storage_usage?: { bytes_used?: number };
}
interface AttributeStats {
  name: string;
  type: string;
  values: { value: unknown; count: number }[];
  stats?: { min: number; max: number; avg: number; sum: number };
}

export function CorpusPage({ corpus }: { corpus: string }) {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  const base = `/v2/corpora/${encodeURIComponent(corpus)}`;
  const docs = useLoad(() => api<{ documents: DocumentRow[] }>('GET', `${base}/documents${qs({ limit: 100, metadata_filter: applied })}`), [corpus, applied], true);
  const stats = useLoad(() => api<{ filter_attribute_stats: AttributeStats[] }>('GET', `${base}/filter_attribute_stats${qs({ max_values: 10 })}`), [corpus]);
  const filterError = docs.error instanceof ApiError ? docs.error.fieldErrors.metadata_filter : undefined;
  return (
    <Page title={`Corpus ${corpus}`} actions={<a href={`#/query?corpus=${encodeURIComponent(corpus)}`}>Query this corpus</a>}>
      <Upload base={base} onUploaded={() => (docs.reload(), stats.reload())} />
      <h2>Documents</h2>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filter);
        }}
      >
        <Field label="Metadata filter" error={filterError && `${filterError} (the list below is the last one that loaded)`} hint="e.g. doc.lang = 'en'">
          {(id, d) => <input id={id} aria-describedby={d} class="wide" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Filter</button>
      </form>
      {!filterError && <ErrorBox error={docs.error} />}
      {docs.loading && !docs.data ? (
        <Loading what="documents" />
      ) : docs.data?.documents.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Metadata</th>
              <th scope="col">Bytes</th>
            </tr>
          </thead>
          <tbody>
            {docs.data.documents.map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={href('corpora', corpus, 'documents', d.id)}>{d.id}</a>
                </td>
                <td>
                  <code>{JSON.stringify(d.metadata ?? {})}</code>
                </td>
                <td class="num">{d.storage_usage?.bytes_used ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        docs.data && <p>No documents{applied ? ' match this filter' : ''}.</p>
      )}
      <h2>Filter attributes</h2>
      <ErrorBox error={stats.error} />
      {stats.data?.filter_attribute_stats.length ? (
        <div class="grid">
          {stats.data.filter_attribute_stats.map((a) => (
            <div class="card" key={a.name}>
              <h3>
                {a.name} <small>{a.type}</small>
              </h3>
              {a.stats && (
                <p>
                  min {a.stats.min} · max {a.stats.max} · avg {a.stats.avg.toFixed(2)}
                </p>
              )}
              <ul>
                {a.values.map((v) => (
                  <li key={String(v.value)}>
                    <code>{JSON.stringify(v.value)}</code>: {v.count}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      ) : (
        stats.data && <p>This corpus declares no filter attributes.</p>
      )}
    </Page>
  );
}

function Upload({ base, onUploaded }: { base: string; onUploaded: () => void }) {
  const [file, setFile] = useState<File>();
  const [metadata, setMetadata] = useState('');
  const [progress, setProgress] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const fields = error instanceof ApiError ? error.fieldErrors : {};

  async function submit(e: Event) {
    e.preventDefault();
    if (!file) return;
    setError(undefined);
    setDone(undefined);
    const form = new FormData();
    form.append('file', file, file.name);
    if (metadata.trim()) form.append('metadata', metadata);
    setProgress(0);
    try {
      const doc = await upload(`${base}/upload_file`, form, setProgress);
      setDone(doc.id);
      onUploaded();
    } catch (err) {
      setError(err);
    } finally {
      setProgress(undefined);
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a file</h2>
      <div class="row">
        <Field label="File" error={fields.file}>
          {(id, d) => <input id={id} aria-describedby={d} type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0])} />}
        </Field>
        <Field label="Metadata (JSON)" error={fields.metadata}>
          {(id, d) => <input id={id} aria-describedby={d} placeholder='{"lang": "en"}' value={metadata} onInput={(e) => setMetadata(e.currentTarget.value)} />}
        </Field>
      </div>
      {progress !== undefined && (
        <p>
          <label>
            Uploading <progress max={1} value={progress} /> {Math.round(progress * 100)}%
          </label>
        </p>
      )}
      {/* A field's error is shown at its field only. */}
      {!Object.keys(fields).length && <ErrorBox error={error} />}
      {done && <p role="status">Uploaded {done}.</p>}
      <button type="submit" disabled={!file || progress !== undefined}>
        Upload
      </button>
    </form>
  );
}
