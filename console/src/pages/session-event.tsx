import { Json, when } from '../ui';

/** A session event as the API shows it (`/v2/agents/{key}/sessions/{key}/events`). */
export interface SessionEvent {
  id: string;
  type: string;
  created_at?: string;
  hidden?: boolean;
  content?: string;
  messages?: { type: string; content?: string; skill_name?: string }[];
  skill_name?: string;
  tool_configuration_name?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_output?: unknown;
  error?: boolean;
  from_step?: string;
  to_step?: string;
  summary_text?: string;
  [k: string]: unknown;
}

const LABELS: Record<string, string> = {
  input_message: 'You',
  agent_output: 'Agent',
  thinking: 'Thinking',
  tool_input: 'Tool call',
  tool_output: 'Tool result',
  step_transition: 'Step',
  compaction: 'Compaction',
  structured_output: 'Structured output',
  session_interrupted: 'Interrupted',
  client_tool_pending: 'Waiting for the client',
  tool_approval_requested: 'Waiting for approval',
  tool_approval_resolved: 'Approval',
  skill_load: 'Skill loaded',
  guardrail_triggered: 'Guardrail',
};

export const labelOf = (type: string) => LABELS[type] ?? type.replace(/_/g, ' ');

/** A line of what an event says, for a timeline entry: the message's text, the tool's name, the step's move. */
export function gistOf(e: SessionEvent, max = 80): string {
  const text =
    e.type === 'input_message'
      ? (e.messages ?? []).map((m) => (m.type === 'skill' ? `(loads skill ${m.skill_name})` : (m.content ?? ''))).join(' ')
      : e.type === 'tool_input' || e.type === 'tool_output'
        ? `${e.tool_configuration_name ?? e.tool_name ?? ''}${e.error ? ' (error)' : ''}`
        : e.type === 'step_transition'
          ? `${e.from_step ?? ''} → ${e.to_step ?? ''}`
          : e.type === 'guardrail_triggered'
            ? `${String(e.guardrail)}: ${String(e.action)}`
            : typeof e.content === 'string'
              ? e.content
              : '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The time of day an event happened (the full date is in its tooltip). */
export const timeOf = (e: SessionEvent): string => (e.created_at ? new Date(e.created_at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : '');

/** One event's body: the text people read for messages, the tool's name and arguments for calls. */
export function EventBody({ event }: { event: SessionEvent }) {
  switch (event.type) {
    case 'input_message':
      return <p>{event.messages?.map((m) => (m.type === 'skill' ? `(loads skill ${m.skill_name})` : m.content)).join('\n')}</p>;
    case 'skill_load':
      return (
        <details>
          <summary>
            Skill <strong>{event.skill_name}</strong> loaded
          </summary>
          <p>{event.content}</p>
        </details>
      );
    case 'guardrail_triggered':
      // Issue 46 (docs/guardrails.md): which guardrail, where, what it did, its score and why.
      return (
        <p>
          <strong>{String(event.guardrail)}</strong> ({String(event.guardrail_type)} on {String(event.on)}): {String(event.action)}
          {typeof event.score === 'number' ? `, score ${event.score}` : ''} — {String(event.reason)}
        </p>
      );
    case 'agent_output':
    case 'thinking':
      return <p>{event.content}</p>;
    case 'tool_input':
      return (
        <>
          <p>
            <strong>{event.tool_configuration_name}</strong> ({event.tool_name})
          </p>
          <Json value={event.tool_input} />
        </>
      );
    case 'tool_output':
      return (
        <>
          <p>
            <strong>{event.tool_configuration_name}</strong> {event.error ? 'failed' : 'returned'}
          </p>
          <Json value={event.tool_output} />
        </>
      );
    case 'step_transition':
      return (
        <p>
          {event.from_step} → {event.to_step}
        </p>
      );
    case 'compaction':
      return <p>{event.summary_text}</p>;
    case 'tool_approval_requested':
      return (
        <>
          <p>
            <strong>{event.tool_configuration_name}</strong> ({event.tool_name}) waits for {event.approvers === 'session_user' ? 'the session user' : 'an agent administrator'} until <time>{when(String(event.expires_at))}</time>
          </p>
          <Json value={event.arguments} />
        </>
      );
    case 'tool_approval_resolved':
      return (
        <p>
          <strong>{event.tool_configuration_name}</strong>: {String(event.decision)} by {String(event.decided_by)}
          {event.edited ? ' (arguments edited)' : ''}
          {event.reason ? ` — ${String(event.reason)}` : ''}
        </p>
      );
    default: {
      const { id: _id, type: _type, created_at: _at, ...rest } = event;
      return <Json value={rest} />;
    }
  }
}

export function EventItem({ event, live }: { event: SessionEvent; live?: boolean }) {
  return (
    <li class={`event ev-${event.type}${event.hidden ? ' hidden-event' : ''}`} data-event-id={event.id}>
      <p class="meta">
        <strong>{labelOf(event.type)}</strong> {event.hidden && <em>(hidden)</em>} {live && <em aria-label="still arriving">…</em>} <time>{when(event.created_at)}</time>
      </p>
      <EventBody event={event} />
    </li>
  );
}
