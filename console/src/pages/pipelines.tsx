import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, href, Json, Loading, Page, useLoad, when } from '../ui';
import { Run, RunDetail, RunProgress, usePolling } from './pipeline-run';

interface DeadLetter {
  id: string;
  source_record_id: string;
  status: string;
  error_message?: string;
  attempt_count: number;
  updated_at?: string;
}

interface PipelineRow {
  key: string;
  name: string;
  status: string;
  source?: { type?: string; [k: string]: unknown };
  trigger?: { type?: string; cron?: string; [k: string]: unknown };
  transform?: { type?: string; agent_key?: string };
}

/** What starts a pipeline, in words. */
const triggerOf = (t: PipelineRow['trigger']) => (!t?.type ? '' : t.type === 'schedule' && t.cron ? `schedule (${t.cron})` : t.type);

export function PipelinesPage({ pipeline, run }: { pipeline?: string; run?: string }) {
  const list = useLoad(() => api<{ pipelines: PipelineRow[] }>('GET', '/v2/pipelines?limit=100'), []);
  if (pipeline)
    return (
      <Page title={`Pipeline ${pipeline}`} actions={<a href={href('pipelines')}>All pipelines</a>}>
        <PipelineDetail pipeline={pipeline} run={run} />
      </Page>
    );
  return (
    <Page title="Pipelines">
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading what="pipelines" />}
      {list.data && !list.data.pipelines.length && <p>No pipelines yet. Pipelines are created with <code>POST /v2/pipelines</code>; see docs/pipelines.md.</p>}
      {list.data?.pipelines.length ? (
        <table aria-label="Pipelines">
          <thead>
            <tr>
              <th scope="col">Pipeline</th>
              <th scope="col">Status</th>
              <th scope="col">Source</th>
              <th scope="col">Trigger</th>
              <th scope="col">Agent</th>
            </tr>
          </thead>
          <tbody>
            {list.data.pipelines.map((p) => (
              <tr key={p.key}>
                <td>
                  <a href={href('pipelines', p.key)}>{p.name}</a> <small>{p.key}</small>
                </td>
                <td>{p.status}</td>
                <td>{p.source?.type}</td>
                <td>{triggerOf(p.trigger)}</td>
                <td>{p.transform?.agent_key && <a href={href('agents', p.transform.agent_key)}>{p.transform.agent_key}</a>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}

function PipelineDetail({ pipeline, run }: { pipeline: string; run?: string }) {
  const base = `/v2/pipelines/${encodeURIComponent(pipeline)}`;
  const settings = useLoad(() => api<PipelineRow>('GET', base), [base]);
  const runs = useLoad(() => api<{ runs: Run[] }>('GET', `${base}/runs?limit=20`), [base]);
  const letters = useLoad(() => api<{ dead_letters: DeadLetter[] }>('GET', `${base}/dead_letters?limit=100`), [base]);
  const [selected, setSelected] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  const running = !!runs.data?.runs.some((r) => r.status === 'running');
  usePolling(runs.reload, running);
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
      <ErrorBox error={settings.error} />
      {settings.data && (
        <dl class="facts" aria-label="Pipeline settings">
          <dt>Source</dt>
          <dd>
            {settings.data.source?.type}
            {/* Credentials come masked from the service (****); the console masks secret-looking keys again. */}
            <details>
              <summary>Settings</summary>
              <Json value={settings.data.source} />
            </details>
          </dd>
          <dt>Trigger</dt>
          <dd>{triggerOf(settings.data.trigger)}</dd>
          <dt>Agent</dt>
          <dd>{settings.data.transform?.agent_key ? <a href={href('agents', settings.data.transform.agent_key)}>{settings.data.transform.agent_key}</a> : 'none'}</dd>
        </dl>
      )}
      <div class="row">
        {/* One run at a time: the service would queue a second; the button says why it waits. */}
        <button type="button" onClick={() => act('trigger')} disabled={running}>
          {running ? 'Running…' : 'Run now'}
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
      {run && <RunDetail base={base} run={run} onStatus={runs.reload} agent={settings.data?.transform?.agent_key} />}
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
