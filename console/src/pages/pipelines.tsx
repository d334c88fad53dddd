import { useEffect, useState } from 'preact/hooks';
import { api, forbidden } from '../api';
import { ErrorBox, href, Json, Loading, Page, useLoad, when } from '../ui';
import { PipelineForm, PipelineSettings } from './pipeline-form';
import { Run, RunDetail, RunProgress, usePolling } from './pipeline-run';

interface DeadLetter {
  id: string;
  source_record_id: string;
  status: string;
  error_message?: string;
  attempt_count: number;
  updated_at?: string;
}

interface PipelineRow extends PipelineSettings {
  status: string;
  updated_at?: string;
}

/** What starts a pipeline, in words (the API's triggers: manual, interval with a duration, cron with an expression). */
const triggerOf = (t: PipelineSettings['trigger']) => (!t?.type ? '' : t.type === 'interval' && t.duration ? `every ${t.duration}` : t.type === 'cron' && t.expression ? `cron ${t.expression}` : t.type);

export function PipelinesPage({ pipeline, run }: { pipeline?: string; run?: string }) {
  // Read again on each return to the list (a pipeline created, edited or deleted on its own page meanwhile).
  const list = useLoad(() => (pipeline ? Promise.resolve(undefined) : api<{ pipelines: PipelineRow[] }>('GET', '/v2/pipelines?limit=100')), [pipeline]);
  if (pipeline)
    return (
      <Page title={`Pipeline ${pipeline}`} actions={<a href={href('pipelines')}>All pipelines</a>}>
        <PipelineDetail pipeline={pipeline} run={run} />
      </Page>
    );
  // A credential without pipeline rights gets one message, not a 403 beside a form it may not use.
  if (forbidden(list.error))
    return (
      <Page title="Pipelines">
        <p class="notice" role="status">
          This credential may not use pipelines (the service answered 403 to the list of pipelines). Pipelines need a pipeline viewer or administrator role on the account.
        </p>
      </Page>
    );
  return (
    <Page title="Pipelines">
      <PipelineForm onSaved={(key) => (location.hash = href('pipelines', key))} />
      <h2>All pipelines</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading what="pipelines" />}
      {list.data && !list.data.pipelines.length && <p>No pipelines yet: create one above.</p>}
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
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const [deleting, setDeleting] = useState(false);
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

  async function remove() {
    setError(undefined);
    try {
      await api('DELETE', base);
      location.hash = href('pipelines');
    } catch (err) {
      setError(err);
      setDeleting(false);
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
        {settings.data && (
          <button type="button" class="secondary" aria-expanded={editing} onClick={() => (setEditing((x) => !x), setSaved(false))}>
            {editing ? 'Close the editor' : 'Edit pipeline'}
          </button>
        )}
        {/* Deleting asks twice: the pipeline, its runs' slot and its schedule go with it. */}
        {deleting ? (
          <>
            <button type="button" class="danger" onClick={remove}>
              Delete {pipeline} for good
            </button>
            <button type="button" class="secondary" onClick={() => setDeleting(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setDeleting(true)}>
            Delete pipeline
          </button>
        )}
      </div>
      {saved && <p role="status">Saved the pipeline.</p>}
      {editing && settings.data && (
        <PipelineForm
          key={settings.data.updated_at}
          existing={settings.data}
          onSaved={() => {
            setEditing(false);
            setSaved(true);
            settings.reload();
          }}
        />
      )}
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
