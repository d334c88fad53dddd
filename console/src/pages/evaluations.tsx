import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field, href, Loading, Page, useLoad, when } from '../ui';

interface Estimate {
  n: number;
  mean: number | null;
  ci95?: [number, number];
}
interface Evaluation {
  id: string;
  name?: string;
  status: 'queued' | 'running' | 'completed' | 'cancelled';
  candidate_revision: number;
  mode: string;
  progress: { total: number; scored: number; failed: number };
  created_at: string;
  finished_at?: string;
  scorers?: { type: string }[];
  aggregates?: { scorer: { type: string }; baseline: Estimate; candidate: Estimate; difference: Estimate }[];
  sessions?: { session_key: string; status: string; replay_session_key?: string; baseline?: { type: string; score: number | null }[]; candidate?: { type: string; score: number | null }[]; error?: string }[];
}

const figure = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v.toFixed(3));
const estimate = (e: Estimate) => `${figure(e.mean)}${e.ci95 ? ` [${figure(e.ci95[0])}, ${figure(e.ci95[1])}]` : ''} (n ${e.n})`;
const finished = (s: Evaluation['status']) => s === 'completed' || s === 'cancelled';

const DEFAULT_SCORERS = '[\n  {"type": "same_tool_calls"}\n]';

/** An agent's evaluations (docs/evaluations.md): the list, and a form to start one. */
export function EvaluationsPage({ agent }: { agent: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/evaluations`;
  const list = useLoad(() => api<{ evaluations: Evaluation[] }>('GET', `${base}?limit=50`), [base]);
  const [revision, setRevision] = useState('current');
  const [mode, setMode] = useState('recorded');
  const [limit, setLimit] = useState('20');
  const [filter, setFilter] = useState('');
  const [scorers, setScorers] = useState(DEFAULT_SCORERS);
  const [error, setError] = useState<unknown>();
  async function start(e: Event) {
    e.preventDefault();
    setError(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(scorers);
    } catch {
      setError(new ApiError(400, ['Scorers must be JSON'], { scorers: 'not JSON' }));
      return;
    }
    try {
      const body = { candidate_revision: revision.trim() === 'current' ? 'current' : Number(revision), mode, sessions: { limit: Number(limit), ...(filter.trim() ? { metadata_filter: filter.trim() } : {}) }, scorers: parsed };
      const created = await api<Evaluation>('POST', base, body);
      location.hash = href('agents', agent, 'evaluations', created.id);
    } catch (err) {
      setError(err);
    }
  }
  const fe = error instanceof ApiError ? error.fieldErrors : {};
  return (
    <Page title={`Evaluations of ${agent}`} actions={<a href={href('agents', agent)}>Back to the agent</a>}>
      <form class="card" onSubmit={start} aria-label="Start an evaluation">
        <h3>Start an evaluation</h3>
        <p class="meta">Replays recorded sessions at a candidate revision and scores both sides, turn by turn.</p>
        <div class="row">
          <Field label="Candidate revision" error={fe.candidate_revision} hint="a number, or current">
            {(id, d) => <input id={id} aria-describedby={d} value={revision} onInput={(e) => setRevision(e.currentTarget.value)} size={8} />}
          </Field>
          <Field label="Mode" error={fe.mode}>
            {(id, d) => (
              <select id={id} aria-describedby={d} value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
                <option value="recorded">recorded</option>
                <option value="live_model">live_model</option>
              </select>
            )}
          </Field>
          <Field label="Sessions (newest)" error={fe['sessions.limit'] ?? fe.sessions}>
            {(id, d) => <input id={id} aria-describedby={d} type="number" min={1} max={200} value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />}
          </Field>
          <Field label="Session metadata filter" error={fe['sessions.metadata_filter']} hint="e.g. doc.tier = 'gold'">
            {(id, d) => <input id={id} aria-describedby={d} value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />}
          </Field>
        </div>
        <Field label="Scorers (JSON)" error={Object.entries(fe).find(([k]) => k.startsWith('scorers'))?.[1]} hint="factual_consistency, llm_judge {llm_name, rubric}, same_tool_calls, structured_output_valid, lambda {tool_id}">
          {(id, d) => <textarea id={id} aria-describedby={d} rows={4} value={scorers} onInput={(e) => setScorers(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Start</button>
        {/* A field's error is shown at its field only. */}
        {!Object.keys(fe).length && <ErrorBox error={error} />}
      </form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading what="evaluations" />}
      {list.data && !list.data.evaluations.length && <p>No evaluation yet.</p>}
      {!!list.data?.evaluations.length && (
        <table>
          <thead>
            <tr>
              <th scope="col">Evaluation</th>
              <th scope="col">Status</th>
              <th scope="col">Revision</th>
              <th scope="col">Mode</th>
              <th scope="col">Progress</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.evaluations.map((e) => (
              <tr key={e.id}>
                <td>
                  <a href={href('agents', agent, 'evaluations', e.id)}>{e.name ?? e.id}</a>
                </td>
                <td>{e.status}</td>
                <td>{e.candidate_revision}</td>
                <td>{e.mode}</td>
                <td>
                  {e.progress.scored + e.progress.failed} / {e.progress.total}
                </td>
                <td>{when(e.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

/** One evaluation: progress (refreshed while it runs), aggregates with 95% intervals, and each session's scores. */
export function EvaluationPage({ agent, id }: { agent: string; id: string }) {
  const path = `/v2/agents/${encodeURIComponent(agent)}/evaluations/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api<Evaluation>('GET', path), [path]);
  const [error, setError] = useState<unknown>();
  const e = loaded.data;
  useEffect(() => {
    if (!e || finished(e.status)) return;
    const t = setTimeout(loaded.reload, 1000);
    return () => clearTimeout(t);
  }, [e]);
  async function cancel() {
    setError(undefined);
    try {
      await api('POST', `${path}/cancel`);
      loaded.reload();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <Page
      title={`Evaluation ${e?.name ?? id}`}
      actions={
        <>
          <a href={href('agents', agent, 'evaluations')}>All evaluations</a>
          {e && !finished(e.status) && (
            <button type="button" onClick={cancel}>
              Cancel
            </button>
          )}
        </>
      }
    >
      <ErrorBox error={error ?? loaded.error} />
      {loaded.loading && !e && <Loading what="the evaluation" />}
      {e && (
        <>
          <p role="status">
            {e.status}: {e.progress.scored} scored, {e.progress.failed} failed of {e.progress.total} sessions · revision {e.candidate_revision} · {e.mode}
          </p>
          <progress max={e.progress.total} value={e.progress.scored + e.progress.failed} aria-label="Sessions done" />
          <h2>Aggregates</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Scorer</th>
                <th scope="col">Baseline</th>
                <th scope="col">Candidate</th>
                <th scope="col">Difference</th>
              </tr>
            </thead>
            <tbody>
              {(e.aggregates ?? []).map((a, i) => (
                <tr key={i}>
                  <td>{a.scorer.type}</td>
                  <td>{estimate(a.baseline)}</td>
                  <td>{estimate(a.candidate)}</td>
                  <td>{estimate(a.difference)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Sessions</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Status</th>
                <th scope="col">Baseline</th>
                <th scope="col">Candidate</th>
                <th scope="col">Replay</th>
              </tr>
            </thead>
            <tbody>
              {(e.sessions ?? []).map((s) => (
                <tr key={s.session_key}>
                  <td>
                    <a href={href('agents', agent, 'sessions', s.session_key, 'history')}>{s.session_key}</a>
                  </td>
                  <td>{s.error ? `${s.status}: ${s.error}` : s.status}</td>
                  <td>{s.baseline?.map((x) => `${x.type} ${figure(x.score)}`).join(', ')}</td>
                  <td>{s.candidate?.map((x) => `${x.type} ${figure(x.score)}`).join(', ')}</td>
                  <td>{s.replay_session_key && <a href={href('agents', agent, 'sessions', s.replay_session_key, 'replay')}>side by side</a>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}
