import { invalid } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { effectiveCompaction } from '../../domain/agent-config';
import type { ActiveSession } from '../../domain/session';
import type { SessionApiEvent } from '../../domain/session-events';
import type { ModelAnswer, ModelCallOptions } from './model-call';

const DEFAULT_PROMPT =
  'Summarise the conversation below so that it can replace it: keep every fact, decision, open question, name, number and tool result the assistant still needs, and what the user wants. Write it as notes, not as a dialogue.';

/** The events a compaction replaces: all visible ones before the last `keep_recent_inputs` inputs, or up to an event. */
export function eventsToCompact(session: ActiveSession, config: AgentConfig, upToEventId?: string): SessionApiEvent[] {
  const visible = session.events.filter((e) => !session.hidden.has(e.data.eventId) && e.type !== 'SessionCompacted');
  if (upToEventId) {
    const at = visible.findIndex((e) => e.data.eventId === upToEventId);
    if (at < 0) throw invalid('session.unknown_event', `compact_up_to_event_id "${upToEventId}" is not a visible event of this session`, { compact_up_to_event_id: 'not a visible event of the session' });
    return visible.slice(0, at + 1);
  }
  const keep = effectiveCompaction(config).keep_recent_inputs;
  const inputs = visible.map((e, i) => (e.type === 'SessionInputReceived' ? i : -1)).filter((i) => i >= 0);
  if (inputs.length <= keep) return [];
  return visible.slice(0, inputs[inputs.length - keep]);
}

/** The summary of `events` (and of the previous summary), by one call to the agent's model. */
export async function summarise(call: (options: ModelCallOptions) => Promise<ModelAnswer>, config: AgentConfig, session: ActiveSession, events: readonly SessionApiEvent[], message: string | undefined, signal: AbortSignal) {
  const policy = effectiveCompaction(config).tool_event_policy;
  const previous = [...session.events].reverse().find((e) => e.type === 'SessionCompacted');
  const lines: string[] = [];
  if (previous?.type === 'SessionCompacted') lines.push(`Earlier summary:\n${previous.data.summaryText}`);
  for (const e of events) {
    if (e.type === 'SessionInputReceived') lines.push(`User: ${e.data.messages.map((m) => (m.type === 'text' ? m.content : `(loads skill ${m.skill_name})`)).join('\n')}`);
    else if (e.type === 'SessionSkillLoaded') lines.push(`Skill ${e.data.skillName} loaded:\n${e.data.content}`);
    else if (e.type === 'SessionAgentOutput') lines.push(`Assistant: ${e.data.content}`);
    else if (e.type === 'SessionStructuredOutput') lines.push(`Assistant: ${JSON.stringify(e.data.content)}`);
    else if (e.type === 'SessionToolCalled' && policy === 'include_all') lines.push(`Tool call ${e.data.toolConfigurationName}: ${JSON.stringify(e.data.toolInput)}`);
    else if (e.type === 'SessionToolReturned' && policy !== 'exclude') lines.push(`Tool result ${e.data.toolConfigurationName}: ${JSON.stringify(e.data.toolOutput)}`);
  }
  const instructions = [DEFAULT_PROMPT, message ?? effectiveCompaction(config).compaction_message].filter(Boolean).join('\n\n');
  const answer = await call({ messages: [{ role: 'system', content: instructions }, { role: 'user', content: lines.join('\n\n') }], tools: [], signal });
  return { summary: answer.content, usage: answer.usage, turns: events.filter((e) => e.type === 'SessionInputReceived').length };
}
