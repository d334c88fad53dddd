import { useRef, useState } from 'preact/hooks';
import { api, ApiError, sse } from '../api';
import { ErrorBox, Field, Page, useLoad } from '../ui';
import { Answer, curlOf, END_TAG, Results, SearchResult, START_TAG } from './query-results';

const initialCorpora = () => new URLSearchParams(location.hash.split('?')[1] ?? '').get('corpus') ?? '';

export function QueryPage() {
  const [query, setQuery] = useState('');
  const [corpora, setCorpora] = useState(initialCorpora);
  const [filter, setFilter] = useState('');
  const [lambda, setLambda] = useState('0.025');
  const [limit, setLimit] = useState('10');
  const [reranker, setReranker] = useState('');
  const [sentences, setSentences] = useState('2');
  const [generate, setGenerate] = useState(true);
  const [results, setResults] = useState<SearchResult[]>();
  const [answer, setAnswer] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>();
  const aborter = useRef<AbortController | undefined>(undefined);
  const rerankers = useLoad(() => api<{ rerankers: { name: string }[] }>('GET', '/v2/rerankers?limit=100').catch(() => ({ rerankers: [] })), []);
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  const fieldError = (prefix: string) => Object.entries(fields).find(([k]) => k.includes(prefix))?.[1];

  const body = {
    query,
    search: {
      corpora: corpora.split(',').map((k) => k.trim()).filter(Boolean).map((corpus_key) => ({ corpus_key, lexical_interpolation: Number(lambda), ...(filter ? { metadata_filter: filter } : {}) })),
      limit: Number(limit),
      context_configuration: { sentences_before: Number(sentences), sentences_after: Number(sentences), start_tag: START_TAG, end_tag: END_TAG },
      ...(reranker === 'mmr' ? { reranker: { type: 'mmr', diversity_bias: 0.3 } } : reranker ? { reranker: { type: 'customer_reranker', reranker_name: reranker } } : {}),
    },
    ...(generate ? { generation: { max_used_search_results: 5, citations: { style: 'numeric' } } } : {}),
    stream_response: true,
  };

  async function run(e: Event) {
    e.preventDefault();
    aborter.current?.abort();
    const ctrl = (aborter.current = new AbortController());
    setError(undefined);
    setResults(undefined);
    setAnswer('');
    setStatus('Searching…');
    try {
      for await (const m of sse('POST', '/v2/query', body, ctrl.signal)) {
        if (m.event === 'search_results') setResults(m.data.search_results);
        else if (m.event === 'generation_chunk') (setStatus('Generating…'), setAnswer((a) => a + m.data.generation_chunk));
        else if (m.event === 'factual_consistency_score') setStatus(`Factual consistency ${Number(m.data.factual_consistency_score).toFixed(2)}`);
        else if (m.event === 'error') throw new ApiError(0, m.data.messages ?? ['the query failed']);
      }
      setStatus((s) => (s.endsWith('…') ? 'Done' : s));
    } catch (err) {
      if (!ctrl.signal.aborted) (setError(err), setStatus(''));
    }
  }

  return (
    <Page title="Query playground">
      <form class="card" onSubmit={run}>
        <Field label="Query" error={fields.query}>
          {(id, d) => <input id={id} aria-describedby={d} class="wide" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />}
        </Field>
        <div class="row">
          <Field label="Corpora" hint="keys, comma separated" error={fieldError('corpus_key') ?? fieldError('corpora')}>
            {(id, d) => <input id={id} aria-describedby={d} required value={corpora} onInput={(e) => setCorpora(e.currentTarget.value)} />}
          </Field>
          <Field label="Metadata filter" error={fieldError('metadata_filter')}>
            {(id, d) => <input id={id} aria-describedby={d} value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />}
          </Field>
          <Field label="Lexical interpolation" error={fieldError('lexical_interpolation')} hint="0 semantic … 1 keyword">
            {(id, d) => <input id={id} aria-describedby={d} type="number" min={0} max={1} step={0.005} value={lambda} onInput={(e) => setLambda(e.currentTarget.value)} />}
          </Field>
        </div>
        <div class="row">
          <Field label="Results" error={fieldError('limit')}>
            {(id, d) => <input id={id} aria-describedby={d} type="number" min={1} max={100} value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />}
          </Field>
          <Field label="Context sentences" error={fieldError('sentences')}>
            {(id, d) => <input id={id} aria-describedby={d} type="number" min={0} max={10} value={sentences} onInput={(e) => setSentences(e.currentTarget.value)} />}
          </Field>
          <Field label="Reranker" error={fieldError('reranker')}>
            {(id) => (
              <select id={id} value={reranker} onChange={(e) => setReranker(e.currentTarget.value)}>
                <option value="">none</option>
                <option value="mmr">MMR (diversity 0.3)</option>
                {rerankers.data?.rerankers.map((r) => <option key={r.name}>{r.name}</option>)}
              </select>
            )}
          </Field>
          <label class="check">
            <input type="checkbox" checked={generate} onChange={(e) => setGenerate(e.currentTarget.checked)} /> Generate an answer
          </label>
        </div>
        <button type="submit">Run query</button>
      </form>
      <p aria-live="polite" class="status">{status}</p>
      <ErrorBox error={error} />
      {generate && answer && (
        <section aria-label="Generated answer" class="card">
          <h2>Answer</h2>
          <Answer text={answer} />
        </section>
      )}
      {results && (
        <section aria-label="Search results">
          <h2>Results ({results.length})</h2>
          <Results results={results} />
        </section>
      )}
      <details>
        <summary>The request as curl</summary>
        <pre class="json">{curlOf('/v2/query', body)}</pre>
        <button type="button" onClick={() => navigator.clipboard?.writeText(curlOf('/v2/query', body))}>
          Copy
        </button>
      </details>
    </Page>
  );
}
