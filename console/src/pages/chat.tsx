import { useEffect, useRef, useState } from 'preact/hooks';
import { api, sse } from '../api';
import { ErrorBox, Field, href, Page } from '../ui';
import { ApprovalDecision, PendingApproval, PendingApprovals } from './approvals';
import { EventItem, SessionEvent } from './session-event';

const STREAMING_ID = 'streaming';

/**
 * Chat in a session. The reply streams in as `streaming_agent_output` deltas and is replaced by the stored
 * `agent_output` when it ends; tool calls and their results appear as the turn records them. Tool calls waiting
 * for approval are listed above the input with Approve, Deny and Edit; a decision streams the resumed turn in.
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
    api<{ events: SessionEvent[] }>('GET', `${base}/events?limit=100`).then((r) => setEvents(r.events), setError);
    void loadApprovals();
    return () => aborter.current?.abort();
  }, [base]);

  const add = (e: SessionEvent) => setEvents((list) => [...list.filter((x) => x.id !== STREAMING_ID || e.type !== 'agent_output'), e]);
  const delta = (content: string) =>
    setEvents((list) => {
      const last = list[list.length - 1];
      if (last?.id === STREAMING_ID) return [...list.slice(0, -1), { ...last, content: `${last.content ?? ''}${content}` }];
      return [...list, { id: STREAMING_ID, type: 'agent_output', content }];
    });

  /** Sends an input and streams the turn's events in; a refusal before the stream opens is thrown to the caller. */
  async function stream(body: Record<string, unknown>) {
    const ctrl = (aborter.current = new AbortController());
    setBusy(true);
    setError(undefined);
    try {
      for await (const m of sse('POST', `${base}/events`, { ...body, stream_response: true }, ctrl.signal)) {
        if (m.event === 'streaming_agent_output') delta(m.data.content);
        else if (m.event === 'error') setError(new Error(m.data.messages?.join('; ') ?? 'the turn failed'));
        else if (m.data && typeof m.data === 'object' && typeof m.data.id === 'string') add(m.data as SessionEvent);
      }
    } catch (err) {
      if (body.type === 'tool_approval') throw err;
      if (!ctrl.signal.aborted) setError(err);
    } finally {
      setBusy(false);
      void loadApprovals();
    }
  }

  async function send(e: Event) {
    e.preventDefault();
    if (!text.trim()) return;
    const input = text;
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
        <Field label="Message">{(id) => <textarea id={id} rows={2} class="wide" value={text} onInput={(e) => setText(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && send(e)} />}</Field>
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
