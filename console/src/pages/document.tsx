import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, href, Json, Loading, Page, useLoad } from '../ui';

type Cell = { text_value?: string; int_value?: number; float_value?: number; bool_value?: boolean; colspan?: number; rowspan?: number };
interface Table {
  id: string;
  title?: string;
  description?: string;
  data?: { headers?: Cell[][]; rows?: Cell[][] };
}
interface Part {
  text: string;
  metadata?: Record<string, unknown>;
  context?: string;
  table_id?: string;
  image_id?: string;
}
interface Doc {
  id: string;
  metadata?: Record<string, unknown>;
  parts?: Part[];
  tables?: Table[];
  images?: { id: string; title?: string; caption?: string; description?: string }[];
}

const cellText = (c: Cell) => String(c.text_value ?? c.int_value ?? c.float_value ?? c.bool_value ?? '');

export function DocumentPage({ corpus, id }: { corpus: string; id: string }) {
  const path = `/v2/corpora/${encodeURIComponent(corpus)}/documents/${encodeURIComponent(id)}`;
  const doc = useLoad(() => api<Doc>('GET', path), [path]);
  return (
    <Page title={`Document ${id}`} actions={<a href={href('corpora', corpus)}>Back to {corpus}</a>}>
      <ErrorBox error={doc.error} />
      {doc.loading && !doc.data && <Loading what="the document" />}
      {doc.data && (
        <>
          <h2>Metadata</h2>
          <Json value={doc.data.metadata ?? {}} />
          <h2>Parts ({doc.data.parts?.length ?? 0})</h2>
          <ol class="parts">
            {(doc.data.parts ?? []).map((p, i) => (
              <li key={i}>
                <p>{p.text}</p>
                <p class="meta">
                  {p.table_id && <span>table {p.table_id} · </span>}
                  {p.image_id && <span>image {p.image_id} · </span>}
                  {p.metadata && Object.keys(p.metadata).length > 0 && <code>{JSON.stringify(p.metadata)}</code>}
                </p>
              </li>
            ))}
          </ol>
          {doc.data.tables?.length ? <h2>Tables</h2> : null}
          {doc.data.tables?.map((t) => (
            <table key={t.id}>
              <caption>{t.title ?? t.id}</caption>
              <thead>
                {(t.data?.headers ?? []).map((row, i) => (
                  <tr key={i}>
                    {row.map((c, j) => (
                      <th scope="col" key={j} colSpan={c.colspan}>
                        {cellText(c)}
                      </th>
                    ))}
                  </tr>
                ))}
              </thead>
              <tbody>
                {(t.data?.rows ?? []).map((row, i) => (
                  <tr key={i}>
                    {row.map((c, j) => (
                      <td key={j} colSpan={c.colspan} rowSpan={c.rowspan}>
                        {cellText(c)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
          {doc.data.images?.length ? <h2>Images</h2> : null}
          <div class="grid">
            {doc.data.images?.map((img) => <DocImage key={img.id} path={`${path}/images/${encodeURIComponent(img.id)}`} title={img.title ?? img.caption ?? img.id} />)}
          </div>
        </>
      )}
    </Page>
  );
}

/** Image bytes come from the API with the caller's key, so they are fetched and shown as a data URL. */
function DocImage({ path, title }: { path: string; title: string }) {
  const [shown, setShown] = useState(false);
  const image = useLoad(() => (shown ? api<{ image_data?: { data: string; mime_type: string }; description?: string }>('GET', path) : Promise.resolve(undefined)), [path, shown]);
  return (
    <figure class="card">
      {image.data?.image_data ? (
        <img src={`data:${image.data.image_data.mime_type};base64,${image.data.image_data.data}`} alt={image.data.description ?? title} />
      ) : (
        <button type="button" onClick={() => setShown(true)}>
          Show image
        </button>
      )}
      <ErrorBox error={image.error} />
      <figcaption>{title}</figcaption>
    </figure>
  );
}
