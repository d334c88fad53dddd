import { useEffect, useRef, useState } from 'preact/hooks';
import { api, sse } from '../api';
import { ErrorBox, Field, href, Page } from '../ui';
import { EventItem, SessionEvent } from './session-event';

const STREAMING_ID = 'streaming';

/**
 * Chat in a session. The reply streams in as `streaming_agent_output` deltas and is replaced by the stored
 * `agent_output` when it ends; tool calls and their results appear as the turn records them.
 */
export function ChatPage({ agent, session }: { agent: string; session: string }) {
  const base = `/v2/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}`;
  const [events, setEvents] = useState<SessionEvent[]>([]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const aborter = useRef<AbortController | undefined>(undefined);

  useEffect(() => {
    api<{ events: SessionEvent[] }>('GET', `${base}/events?limit=100`).then((r) => setEvents(r.events), setError);
    return () => aborter.current?.abort();
  }, [base]);

  const add = (e: SessionEvent) => setEvents((list) => [...list.filter((x) => x.id !== STREAMING_ID || e.type !== 'agent_output'), e]);
  const delta = (content: string) =>
    setEvents((list) => {
      const last = list[list.length - 1];
      if (last?.id === STREAMING_ID) return [...list.slice(0, -1), { ...last, content: `${last.content ?? ''}${content}` }];
      return [...list, { id: STREAMING_ID, type: 'agent_output', content }];
    });

  async function send(e: Event) {
    e.preventDefault();
    if (!text.trim()) return;
    const ctrl = (aborter.current = new AbortController());
    setBusy(true);
    setError(undefined);
    const input = text;
    setText('');
    try {
      for await (const m of sse('POST', `${base}/events`, { type: 'input_message', messages: [{ type: 'text', content: input }], stream_response: true }, ctrl.signal)) {
        if (m.event === 'streaming_agent_output') delta(m.data.content);
        else if (m.event === 'error') setError(new Error(m.data.messages?.join('; ') ?? 'the turn failed'));
        else if (m.data && typeof m.data === 'object' && typeof m.data.id === 'string') add(m.data as SessionEvent);
      }
    } catch (err) {
      if (!ctrl.signal.aborted) setError(err);
    } finally {
      setBusy(false);
    }
  }

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
