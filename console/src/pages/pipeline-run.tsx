import { useEffect } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, href, Json, useLoad, when } from '../ui';

export interface Run {
  id: string;
  status: string;
  trigger_type?: string;
  records_fetched: number;
  records_processed: number;
  records_failed: number;
  error?: unknown;
  started_at?: string;
  completed_at?: string;
}

/** Reloads every 2 s while `active`: runs and their records move on in the worker wing, not in this page. */
export function usePolling(reload: () => void, active: boolean) {
  useEffect(() => {
    if (!active) return;
    const t = setInterval(reload, 2000);
    return () => clearInterval(t);
  }, [active, reload]);
}

export function RunProgress({ run }: { run: Run }) {
  const done = run.records_processed + run.records_failed;
  return (
    <span>
      <progress max={Math.max(run.records_fetched, 1)} value={done} aria-label={`${done} of ${run.records_fetched} records`} /> {done}/{run.records_fetched}
      {run.records_failed ? ` (${run.records_failed} failed)` : ''}
    </span>
  );
}

/** One run: its progress and its per-record events, newest first, live while it runs. */
export function RunDetail({ base, run, onStatus, agent }: { base: string; run: string; onStatus: (status: string) => void; agent?: string }) {
  const detail = useLoad(() => api<Run>('GET', `${base}/runs/${encodeURIComponent(run)}`), [base, run]);
  const events = useLoad(() => api<{ events: { id: string; type: string; occurred_at: string; source_record_id?: string; [k: string]: unknown }[] }>('GET', `${base}/runs/${encodeURIComponent(run)}/events?limit=200`), [base, run]);
  const running = detail.data?.status === 'running';
  usePolling(detail.reload, running);
  usePolling(events.reload, running);
  // The run list polls on its own clock: tell it at once when this run moves on.
  useEffect(() => void (detail.data && onStatus(detail.data.status)), [detail.data?.status]);
  return (
    <section aria-labelledby="run-title">
      <h2 id="run-title">Run {run}</h2>
      <ErrorBox error={detail.error ?? events.error} />
      {detail.data && (
        <p>
          {detail.data.status} · <RunProgress run={detail.data} /> · started {when(detail.data.started_at)}
        </p>
      )}
      {detail.data?.error ? <Json value={detail.data.error} /> : null}
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Event</th>
            <th scope="col">Record</th>
            <th scope="col">Session</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {events.data?.events.map(({ id, type, occurred_at, source_record_id, session_key, ...rest }) => (
            <tr key={id}>
              <td>{when(occurred_at)}</td>
              <td>{type}</td>
              <td>{source_record_id}</td>
              <td>{typeof session_key === 'string' && (agent ? <a href={href('agents', agent, 'sessions', session_key, 'history')}>{session_key}</a> : session_key)}</td>
              <td>
                <code>{JSON.stringify(rest)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
