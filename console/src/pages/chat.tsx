import { useEffect, useRef, useState } from 'preact/hooks';
import { api, sse, SseMessage } from '../api';
import { ErrorBox, Field, href, Page } from '../ui';
import { ApprovalDecision, PendingApproval, PendingApprovals } from './approvals';
import { EventItem, SessionEvent } from './session-event';

const STREAMING_ID = 'streaming';

/**
 * Chat in a session. The reply streams in as `streaming_agent_output` deltas and becomes the stored `agent_output`
 * that `streaming_agent_output_end` names when it ends; tool calls and their results appear as the turn records them. Tool calls waiting
 * for approval are listed above the input with Approve, Deny and Edit; a decision streams the resumed turn in. A
 * turn outlives the page: opened (or reloaded) while one runs, the page re-attaches to it
 * (`GET …/stream?until=turn_end`, which gives the history, the answer streamed so far, then the rest live).
 */
export function ChatPage({ agent, session }: { agent: string; session: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}`;
  const [events, setEvents] = useState<SessionEvent[]>([]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [approvals, setApprovals] = useState<PendingApproval[]>([]);
  const aborter = useRef<AbortController | undefined>(undefined);
  const loadApprovals = () => api<{ approvals: PendingApproval[] }>('GET', `${base}/pending_approvals`).then((r) => setApprovals(r.approvals), () => setApprovals([]));

  useEffect(() => {
    const ctrl = (aborter.current = new AbortController());
    void loadApprovals();
    api<{ status?: string }>('GET', base)
      .then(async (s) => {
        if (s.status !== 'running') return setEvents((await api<{ events: SessionEvent[] }>('GET', `${base}/events?limit=100`)).events);
        setEvents([]);
        await follow(sse('GET', `${base}/stream?until=turn_end`, undefined, ctrl.signal), ctrl);
      })
      .catch((err) => !ctrl.signal.aborted && setError(err));
    return () => ctrl.abort();
  }, [base]);

  const add = (e: SessionEvent) => setEvents((list) => [...list.filter((x) => x.id !== e.id && (x.id !== STREAMING_ID || e.type !== 'agent_output')), e]);
  const delta = (content: string) =>
    setEvents((list) => {
      const last = list[list.length - 1];
      if (last?.id === STREAMING_ID) return [...list.slice(0, -1), { ...last, content: `${last.content ?? ''}${content}` }];
      return [...list, { id: STREAMING_ID, type: 'agent_output', content }];
    });

  /**
   * The streamed reply is the stored `agent_output` named by `streaming_agent_output_end` (an input's own stream sends
   * no `agent_output` after its pieces, as the reference's does not; a re-attached one may have sent it already).
   */
  const ended = (eventId: string | undefined, createdAt: string | undefined) =>
    eventId &&
    setEvents((list) => (list.some((x) => x.id === eventId) ? list.filter((x) => x.id !== STREAMING_ID) : list.map((x) => (x.id === STREAMING_ID ? { ...x, id: eventId, created_at: createdAt ?? x.created_at } : x))));

  /** Sends an input and streams the turn's events in; a refusal before the stream opens is thrown to the caller. */
  async function stream(body: Record<string, unknown>) {
    const ctrl = (aborter.current = new AbortController());
    setError(undefined);
    await follow(sse('POST', `${base}/events`, { ...body, stream_response: true }, ctrl.signal), ctrl, body.type === 'tool_approval');
  }

  /**
   * Shows a turn's stream as it comes: the input's own answer, or a running turn re-attached to. With `rethrow`, a
   * refusal is thrown to the caller (an approval's form shows it) instead of shown here.
   */
  async function follow(stream: AsyncGenerator<SseMessage>, ctrl: AbortController, rethrow = false) {
    setBusy(true);
    try {
      for await (const m of stream) {
        if (m.event === 'streaming_agent_output') delta(m.data.content);
        else if (m.event === 'streaming_agent_output_end') ended(m.data.event_id, m.data.created_at);
        else if (m.event === 'error') setError(new Error(m.data.messages?.join('; ') ?? 'the turn failed'));
        else if (m.data && typeof m.data === 'object' && typeof m.data.id === 'string') add(m.data as SessionEvent);
      }
    } catch (err) {
      if (rethrow) throw err;
      if (!ctrl.signal.aborted) setError(err);
    } finally {
      if (!ctrl.signal.aborted || aborter.current === ctrl) setBusy(false);
      void loadApprovals();
    }
  }

  async function send(e: Event) {
    e.preventDefault();
    // Sent as typed, less the blank lines and spaces around it (a trailing newline reached the tools' queries).
    const input = text.trim();
    if (!input || busy) return;
    setText('');
    await stream({ type: 'input_message', messages: [{ type: 'text', content: input }] });
  }

  const decide = (d: ApprovalDecision) => stream({ ...d });

  async function interrupt() {
    aborter.current?.abort();
    await api('POST', `${base}/events`, { type: 'interrupt' }).catch(() => undefined);
  }

  return (
    <Page title={`Session ${session}`} actions={<a href={href('agents', agent, 'sessions', session, 'history')}>Timeline and forks</a>}>
      <p>
        Agent <a href={href('agents', agent)}>{agent}</a>
      </p>
      <ol class="chat" aria-live="polite" aria-label="Conversation">
        {events.map((ev, i) => (
          <EventItem key={`${ev.id}-${i}`} event={ev} live={ev.id === STREAMING_ID} />
        ))}
      </ol>
      <PendingApprovals approvals={approvals} decide={decide} />
      <ErrorBox error={error} />
      <form class="row chat-input" onSubmit={send}>
        <Field label="Message">{(id) => <textarea id={id} rows={2} class="wide" value={text} onInput={(e) => setText(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Enter' && !e.shiftKey && !e.isComposing && send(e)} />}</Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Agent is answering…' : 'Send'}
        </button>
        {busy && (
          <button type="button" onClick={interrupt}>
            Stop
          </button>
        )}
      </form>
    </Page>
  );
}
