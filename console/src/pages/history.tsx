import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, Field, href, Json, Page, useLoad } from '../ui';
import { ApprovalDecision, PendingApproval, PendingApprovals } from './approvals';
import { ReplayForm } from './replay';
import { Origin } from './agent';
import { EventItem, gistOf, labelOf, SessionEvent, timeOf } from './session-event';

/** Every event of the session, hidden ones included, page by page (the API gives at most 100 at a time). */
async function allEvents(base: string, asOf?: string): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  let pageKey: string | undefined;
  do {
    const params = new URLSearchParams({ limit: '100', include_hidden: 'true', ...(asOf ? { as_of: asOf } : {}), ...(pageKey ? { page_key: pageKey } : {}) });
    const page = await api<{ events: SessionEvent[]; metadata?: { page_key?: string } }>('GET', `${base}/events?${params}`);
    out.push(...page.events);
    pageKey = page.metadata?.page_key;
  } while (pageKey && out.length < 5000);
  return out;
}

/**
 * A session's history: the timeline, a slider that shows the session as of any event (the API's `as_of`,
 * so hides and compactions are as they were then), fork from that event, and hidden events shown or not.
 */
export function HistoryPage({ agent, session }: { agent: string; session: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}`;
  const timeline = useLoad(() => allEvents(base), [base]);
  const info = useLoad(() => api<{ forked_from?: { agent_key: string; session_key: string }; replay_of?: string; agent_revision?: number }>('GET', base), [base]);
  const pending = useLoad(() => api<{ approvals: PendingApproval[] }>('GET', `${base}/pending_approvals`).then((r) => r.approvals), [base]);
  async function decide(d: ApprovalDecision) {
    await api('POST', `${base}/events`, d);
    timeline.reload();
    pending.reload();
  }
  const events = timeline.data ?? [];
  const [at, setAt] = useState<number>();
  const [showHidden, setShowHidden] = useState(false);
  const [error, setError] = useState<unknown>();
  const index = at ?? events.length - 1;
  const current = events[index];
  useEffect(() => setAt(undefined), [timeline.data]);
  const asOf = useLoad(
    () => (current ? Promise.all([api('GET', `${base}?as_of=${encodeURIComponent(current.id)}`), allEvents(base, current.id)]) : Promise.resolve(undefined)),
    [base, current?.id],
  );
  const [view, upTo] = asOf.data ?? [];
  const shown = (upTo ?? []).filter((e) => showHidden || !e.hidden);

  async function fork() {
    setError(undefined);
    try {
      const created = await api<{ key: string }>('POST', `/v2/agents/${encodeURIComponent(agent)}/sessions`, { from_session: { session_key: session, include_up_to_event_id: current!.id } });
      location.hash = href('agents', agent, 'sessions', created.key);
    } catch (err) {
      setError(err);
    }
  }

  async function toggleHidden(e: SessionEvent) {
    setError(undefined);
    try {
      await api('POST', `${base}/events/${encodeURIComponent(e.id)}/${e.hidden ? 'unhide' : 'hide'}`);
      timeline.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <Page
      title={`History of ${session}`}
      actions={
        <span>
          <a href={href('agents', agent, 'sessions', session, 'traces')}>Traces</a> · <a href={href('agents', agent, 'sessions', session)}>Back to the chat</a>
        </span>
      }
    >
      <ErrorBox error={timeline.error ?? error} />
      {info.data && (info.data.forked_from || info.data.replay_of || info.data.agent_revision !== undefined) && (
        <p class="origin">
          Origin: <Origin agent={agent} session={info.data} />
        </p>
      )}
      <PendingApprovals approvals={pending.data ?? []} decide={decide} />
      {events.length > 0 && <ReplayForm agent={agent} session={session} />}
      {events.length === 0 && timeline.data && <p>This session has no events yet.</p>}
      {current && (
        <div class="card">
          <Field label={`As of event ${index + 1} of ${events.length}`} hint={`${labelOf(current.type)} · ${current.id}`}>
            {(id, d) => <input id={id} aria-describedby={d} type="range" class="wide" min={0} max={events.length - 1} value={index} onInput={(e) => setAt(Number(e.currentTarget.value))} />}
          </Field>
          <div class="row">
            <button type="button" onClick={fork}>
              Fork from this event
            </button>
            <label class="check">
              <input type="checkbox" checked={showHidden} onChange={(e) => setShowHidden(e.currentTarget.checked)} /> Show hidden events
            </label>
          </div>
        </div>
      )}
      <div class="split">
        <section aria-label="Timeline">
          <h2>Timeline</h2>
          <ol class="timeline">
            {events
              .filter((e) => showHidden || !e.hidden)
              .map((e) => (
                <li key={e.id} class={e.id === current?.id ? 'selected' : ''}>
                  <button type="button" class="link" aria-pressed={e.id === current?.id} onClick={() => setAt(events.indexOf(e))}>
                    {labelOf(e.type)}
                  </button>{' '}
                  <time dateTime={e.created_at} title={e.created_at}>
                    {timeOf(e)}
                  </time>{' '}
                  <span class="gist">{gistOf(e)}</span>{' '}
                  {e.hidden && <em>hidden</em>}{' '}
                  <button type="button" class="small" onClick={() => toggleHidden(e)}>
                    {e.hidden ? 'Unhide' : 'Hide'}
                  </button>
                </li>
              ))}
          </ol>
        </section>
        <section aria-label="The session as of the selected event">
          <h2>The session then</h2>
          <ErrorBox error={asOf.error} />
          {view && (
            <details>
              <summary>Session state (status, step, usage)</summary>
              <Json value={view} />
            </details>
          )}
          <ol class="chat">
            {shown.map((e) => (
              <EventItem key={e.id} event={e} />
            ))}
          </ol>
        </section>
      </div>
    </Page>
  );
}
