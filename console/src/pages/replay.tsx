import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field, href, Loading, Page, useLoad } from '../ui';

interface ToolCall {
  name: string;
  arguments: unknown;
}
interface TurnSide {
  tool_calls: ToolCall[];
  steps: string[];
  answer: string;
  tokens: { input_tokens: number; output_tokens: number };
  latency_ms: number;
  outcome: string;
}
interface TurnDiff {
  input_event_id: string;
  original: TurnSide;
  replay?: TurnSide;
  same: { tool_calls: boolean; arguments: boolean; steps: boolean; answer: boolean; events: boolean };
  answer_similarity: number;
  divergence?: { kind: string; detail: string; model_call?: number };
}
export interface ReplayDiff {
  turns: TurnDiff[];
  totals: { turns: number; replayed: number; same_answers: number; same_tool_calls: number; same_events: number; diverged: number };
}

/** Starts a replay of a session (docs/replay.md) and opens the comparison. */
export function ReplayForm({ agent, session }: { agent: string; session: string }) {
  const [revision, setRevision] = useState('current');
  const [mode, setMode] = useState('recorded');
  const [allow, setAllow] = useState(false);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  async function replay(e: Event) {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const body = { agent_revision: revision.trim() === 'current' ? 'current' : Number(revision), mode, allow_side_effects: allow };
      const res = await api<{ session_key: string }>('POST', `/v2/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}/replay`, body);
      location.hash = href('agents', agent, 'sessions', res.session_key, 'replay');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const fieldErrors = error instanceof ApiError ? error.fieldErrors : {};
  return (
    <form class="card" onSubmit={replay} aria-label="Replay this session">
      <h3>Replay this session</h3>
      <div class="row">
        <Field label="Agent revision" error={fieldErrors.agent_revision} hint="a number, or current">
          {(id, d) => <input id={id} aria-describedby={d} value={revision} onInput={(e) => setRevision(e.currentTarget.value)} size={8} />}
        </Field>
        <Field label="Mode" error={fieldErrors.mode}>
          {(id, d) => (
            <select id={id} aria-describedby={d} value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
              <option value="recorded">recorded (no model call)</option>
              <option value="live_model">live_model (the model again, recorded tools)</option>
              <option value="live">live (everything again)</option>
            </select>
          )}
        </Field>
        <label class="check">
          <input type="checkbox" checked={allow} onChange={(e) => setAllow(e.currentTarget.checked)} /> Allow side effects
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Replaying…' : 'Replay'}
        </button>
      </div>
      {!Object.keys(fieldErrors).length && <ErrorBox error={error} />}
    </form>
  );
}

const yesNo = (same: boolean) => (same ? 'same' : 'changed');

function Side({ side, title }: { side?: TurnSide; title: string }) {
  return (
    <div class="card">
      <h3>{title}</h3>
      {!side ? (
        <p class="meta">Not replayed.</p>
      ) : (
        <>
          <p class="answer">{side.answer || <em>(no answer)</em>}</p>
          {side.tool_calls.length > 0 && (
            <ul>
              {side.tool_calls.map((c, i) => (
                <li key={i}>
                  <code>
                    {c.name} {JSON.stringify(c.arguments)}
                  </code>
                </li>
              ))}
            </ul>
          )}
          <p class="meta">
            Steps {side.steps.join(' → ') || '—'} · {side.outcome} · {side.tokens.input_tokens}+{side.tokens.output_tokens} tokens · {side.latency_ms} ms
          </p>
        </>
      )}
    </div>
  );
}

/** A replay beside its original, turn by turn (`GET …/sessions/{replay}/replay`). */
export function ReplayPage({ agent, session }: { agent: string; session: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}`;
  const loaded = useLoad(() => Promise.all([api<{ diff: ReplayDiff }>('GET', `${base}/replay`).then((r) => r.diff), api<{ replay_of?: { session_key: string; mode: string; agent_revision: number } }>('GET', base)]), [base]);
  const [diff, view] = loaded.data ?? [];
  const origin = view?.replay_of;
  return (
    <Page title={`Replay ${session}`} actions={<a href={href('agents', agent, 'sessions', session, 'history')}>The replay's history</a>}>
      <ErrorBox error={loaded.error} />
      {loaded.loading && !loaded.data && <Loading what="the replay" />}
      {origin && diff && (
        <>
          <p>
            Of <a href={href('agents', agent, 'sessions', origin.session_key, 'history')}>{origin.session_key}</a>, at revision {origin.agent_revision}, mode {origin.mode}:{' '}
            {diff.totals.replayed} of {diff.totals.turns} turns replayed, {diff.totals.same_answers} same answers, {diff.totals.same_tool_calls} same tool calls, {diff.totals.diverged} diverged.
          </p>
          {diff.turns.map((t, i) => (
            <section key={t.input_event_id} aria-label={`Turn ${i + 1}`}>
              <h2>
                Turn {i + 1}{' '}
                <span class="meta">
                  answer {yesNo(t.same.answer)} ({Math.round(t.answer_similarity * 100)}% alike) · tool calls {yesNo(t.same.tool_calls)} · arguments {yesNo(t.same.arguments)} · steps {yesNo(t.same.steps)}
                </span>
              </h2>
              {t.divergence && (
                <p class="error" role="status">
                  Diverged ({t.divergence.kind}): {t.divergence.detail}
                </p>
              )}
              <div class="pair">
                <Side side={t.original} title="Original" />
                <Side side={t.replay} title="Replay" />
              </div>
            </section>
          ))}
        </>
      )}
    </Page>
  );
}
