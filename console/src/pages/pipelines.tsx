import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, href, Loading, Page, useLoad, when } from '../ui';
import { Run, RunDetail, RunProgress, usePolling } from './pipeline-run';

interface DeadLetter {
  id: string;
  source_record_id: string;
  status: string;
  error_message?: string;
  attempt_count: number;
  updated_at?: string;
}

export function PipelinesPage({ pipeline, run }: { pipeline?: string; run?: string }) {
  const list = useLoad(() => api<{ pipelines: { key: string; name: string; status: string; agent_key?: string }[] }>('GET', '/v2/pipelines?limit=100'), []);
  return (
    <Page title={pipeline ? `Pipeline ${pipeline}` : 'Pipelines'}>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading what="pipelines" />}
      {list.data && !list.data.pipelines.length && <p>No pipelines yet. Pipelines are created with <code>POST /v2/pipelines</code>; see docs/pipelines.md.</p>}
      <ul class="tabs" aria-label="Pipelines">
        {list.data?.pipelines.map((p) => (
          <li key={p.key}>
            <a href={href('pipelines', p.key)} aria-current={p.key === pipeline ? 'page' : undefined}>
              {p.name} <small>({p.status})</small>
            </a>
          </li>
        ))}
      </ul>
      {pipeline && <PipelineDetail pipeline={pipeline} run={run} />}
    </Page>
  );
}

function PipelineDetail({ pipeline, run }: { pipeline: string; run?: string }) {
  const base = `/v2/pipelines/${encodeURIComponent(pipeline)}`;
  const runs = useLoad(() => api<{ runs: Run[] }>('GET', `${base}/runs?limit=20`), [base]);
  const letters = useLoad(() => api<{ dead_letters: DeadLetter[] }>('GET', `${base}/dead_letters?limit=100`), [base]);
  const [selected, setSelected] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  usePolling(runs.reload, !!runs.data?.runs.some((r) => r.status === 'running'));
  // A run's end changes the dead letters (a record dead-lettered, or reprocessed away): read them again with it.
  useEffect(() => letters.reload(), [runs.data]);

  async function act(path: string, body?: unknown) {
    setError(undefined);
    try {
      const started = await api<Run>('POST', `${base}/${path}`, body);
      setSelected([]);
      runs.reload();
      letters.reload();
      if (started?.id) location.hash = href('pipelines', pipeline, 'runs', started.id);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <>
      <div class="row">
        <button type="button" onClick={() => act('trigger')}>
          Run now
        </button>
      </div>
      <ErrorBox error={error ?? runs.error} />
      <h2>Runs</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={href('pipelines', pipeline, 'runs', r.id)}>{r.id}</a>
              </td>
              <td>{r.status}</td>
              <td>
                <RunProgress run={r} />
              </td>
              <td>{when(r.started_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {run && <RunDetail base={base} run={run} onStatus={runs.reload} />}
      <h2>Dead letters</h2>
      <ErrorBox error={letters.error} />
      {letters.data?.dead_letters.length ? (
        <form onSubmit={(e) => (e.preventDefault(), act('dead_letters/process', selected.length ? { source_record_ids: selected } : {}))}>
          <table>
            <thead>
              <tr>
                <th scope="col">Reprocess</th>
                <th scope="col">Record</th>
                <th scope="col">Error</th>
                <th scope="col">Attempts</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {letters.data.dead_letters.map((d) => (
                <tr key={d.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Reprocess ${d.source_record_id}`}
                      checked={selected.includes(d.source_record_id)}
                      onChange={(e) => setSelected((s) => (e.currentTarget.checked ? [...s, d.source_record_id] : s.filter((x) => x !== d.source_record_id)))}
                    />
                  </td>
                  <td>{d.source_record_id}</td>
                  <td>{d.error_message}</td>
                  <td>{d.attempt_count}</td>
                  <td>{d.status}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="submit">{selected.length ? `Reprocess ${selected.length} selected` : 'Reprocess all'}</button>
        </form>
      ) : (
        letters.data && <p>No dead letters.</p>
      )}
    </>
  );
}
