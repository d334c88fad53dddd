import type { StepConfig, TemplatedReminder } from './agent-config';
import type { ActiveSession } from './session';
import { inputText, type SessionApiEvent } from './session-events';

/** How the model's view of a session starts after a compaction: this line, then the summary. */
export const SUMMARY_HEADING = 'Summary of the conversation before this point:';

/** A chat message as the model gets it (OpenAI's shape). */
/** A part of a message that is not only text (an image loaded by `image_read`). */
export type ContentPart = { readonly type: 'text'; readonly text: string } | { readonly type: 'image_url'; readonly image_url: { readonly url: string; readonly detail: 'auto' | 'low' | 'high' } };

/** An image the model may see: a data URL of its bytes. */
export type ImageSource = (artifactId: string) => string | undefined;

export interface PromptMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string | readonly ContentPart[] | null;
  readonly tool_calls?: readonly { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  readonly tool_call_id?: string;
}

/** Renders a reminder's template for the session (Velocity or verbatim). */
export type ReminderRenderer = (reminder: TemplatedReminder) => string;

/** Whether a reminder fires on the `n`-th (0-based) matching hook event: after `skip_first`, every `fire_every`. */
export function reminderFires(reminder: TemplatedReminder, n: number): boolean {
  const skip = reminder.skip_first ?? 0;
  const every = reminder.fire_every ?? 1;
  return n >= skip && (n - skip) % every === 0;
}

/**
 * The conversation as model messages: inputs, answers, tool calls and their outputs, in order, from the last
 * compaction's summary on (hidden events are out of the model's view). Reminders of the step an event was
 * recorded in are appended to the matching messages, counted per reminder and hook from the last compaction,
 * so the same history always gives the same prompt. An input that arrived while tool calls were outstanding
 * (a steer) follows their outputs, as the model's API requires.
 */
/** Expands glossary terms in an input of a step (the step's `glossary_expansion` reminders). */
export type TermExpander = (step: string, text: string) => string;

export function historyMessages(session: ActiveSession, steps: Readonly<Record<string, StepConfig>>, render: ReminderRenderer, expand: TermExpander = (_s, t) => t, images: ImageSource = () => undefined): PromptMessage[] {
  const out: PromptMessage[] = [];
  const counters = new Map<string, number>();
  const remind = (step: string, hook: 'input_message' | 'tool_output'): string => {
    const reminders = steps[step]?.reminders ?? [];
    const texts: string[] = [];
    reminders.forEach((r, i) => {
      if (r.type !== 'templated' || !r.hooks.includes(hook)) return;
      const key = `${step}#${i}#${hook}`;
      const n = counters.get(key) ?? 0;
      counters.set(key, n + 1);
      if (reminderFires(r, n)) texts.push(render(r));
    });
    return texts.map((t) => `\n\n<reminder>${t}</reminder>`).join('');
  };
  type Call = { id: string; type: 'function'; function: { name: string; arguments: string } };
  let open: { modelCallId: string; calls: Call[]; ids: Set<string>; buffered: PromptMessage[] } | undefined;
  const closeGroup = () => {
    if (!open) return;
    for (const id of open.ids) out.push({ role: 'tool', tool_call_id: id, content: JSON.stringify({ error: 'no output was returned for this call' }) });
    out.push(...open.buffered);
    open = undefined;
  };
  // After a compaction the model reads its summary, then what it kept and what came after; compacted events are
  // hidden. Reminder counters start again after it: events kept from before it carry none.
  const lastCompaction = session.events.map((e) => e.type).lastIndexOf('SessionCompacted');
  const summary = lastCompaction >= 0 ? session.events[lastCompaction] : undefined;
  const countFrom = new Set(session.events.slice(lastCompaction + 1).map((e) => e.data.eventId));
  const quiet = (step: string, hook: 'input_message' | 'tool_output', id: string) => (countFrom.has(id) ? remind(step, hook) : '');
  if (summary) out.push(messageOf(summary, () => '', expand, images)!);
  const visible = session.events.filter((e) => !session.hidden.has(e.data.eventId) && e.type !== 'SessionCompacted');
  for (const e of inModelOrder(visible, session.events)) {
    if (e.type === 'SessionToolCalled') {
      if (open?.modelCallId === e.data.modelCallId) {
        open.calls.push(toolCall(e));
        open.ids.add(e.data.toolCallId);
        continue;
      }
      closeGroup();
      const calls = [toolCall(e)];
      out.push({ role: 'assistant', content: null, tool_calls: calls });
      open = { modelCallId: e.data.modelCallId, calls, ids: new Set([e.data.toolCallId]), buffered: [] };
      continue;
    }
    const m = messageOf(e, (step, hook) => quiet(step, hook, e.data.eventId), expand, images);
    if (e.type === 'SessionToolReturned' && open?.ids.has(e.data.toolCallId)) {
      open.ids.delete(e.data.toolCallId);
      out.push(m!);
      if (open.ids.size === 0) {
        out.push(...open.buffered);
        open = undefined;
      }
      continue;
    }
    if (!m) continue;
    if (open && (e.type === 'SessionInputReceived' || e.type === 'SessionImageRead' || e.type === 'SessionSkillLoaded')) {
      open.buffered.push(m);
      continue;
    }
    closeGroup();
    out.push(m);
  }
  // Calls still open at the end are the turn's own (their outputs are being recorded) unless input followed them.
  if (open && open.buffered.length) closeGroup();
  return out;
}

/**
 * The events in the order the model lived them: an answer is placed before the inputs it had not seen (a steer
 * stored while the model was answering), so the model reads its answer, then the steer, then answers again.
 * `inputsSeen` counts every input of the session, so inputs are numbered over all of them.
 */
function inModelOrder(events: readonly SessionApiEvent[], all: readonly SessionApiEvent[]): SessionApiEvent[] {
  const ordinal = new Map<string, number>();
  for (const e of all) if (e.type === 'SessionInputReceived') ordinal.set(e.data.eventId, ordinal.size);
  const ordered: SessionApiEvent[] = [];
  const inputAt = new Map<number, number>();
  for (const e of events) {
    if (e.type === 'SessionInputReceived') {
      inputAt.set(ordinal.get(e.data.eventId)!, ordered.length);
      ordered.push(e);
      continue;
    }
    const seen = (e.data as { inputsSeen?: number }).inputsSeen;
    const at = seen === undefined ? undefined : inputAt.get(seen);
    if (at === undefined) {
      ordered.push(e);
      continue;
    }
    ordered.splice(at, 0, e);
    for (const [k, v] of inputAt) if (v >= at) inputAt.set(k, v + 1);
  }
  return ordered;
}

const toolCall = (e: Extract<SessionApiEvent, { type: 'SessionToolCalled' }>) => ({ id: e.data.toolCallId, type: 'function' as const, function: { name: e.data.toolConfigurationName, arguments: e.data.arguments } });

function messageOf(e: SessionApiEvent, remind: (step: string, hook: 'input_message' | 'tool_output') => string, expand: TermExpander, images: ImageSource): PromptMessage | undefined {
  switch (e.type) {
    case 'SessionInputReceived': {
      // An input of skills only is its `skill_load` events' messages: no empty user message before them.
      if (!e.data.messages.some((m) => m.type === 'text')) return undefined;
      return { role: 'user', content: expand(e.data.step, inputText(e.data.messages)) + remind(e.data.step, 'input_message') };
    }
    case 'SessionSkillLoaded':
      // The reference sends a loaded skill's content as a user message; after the tool's output when the model asked.
      return { role: 'user', content: e.data.content };
    case 'SessionAgentOutput':
      return { role: 'assistant', content: e.data.content };
    case 'SessionStructuredOutput':
      return { role: 'assistant', content: JSON.stringify(e.data.content) };
    case 'SessionToolReturned':
      return { role: 'tool', tool_call_id: e.data.toolCallId, content: JSON.stringify(e.data.toolOutput) + remind(e.data.step, 'tool_output') };
    case 'SessionCompacted':
      return { role: 'user', content: `${SUMMARY_HEADING}\n${e.data.summaryText}` };
    case 'SessionImageRead': {
      // Tool messages cannot carry images: the image the tool loaded follows its output as the user's.
      const url = images(e.data.artifactId);
      return url ? { role: 'user', content: [{ type: 'text', text: `Image ${e.data.artifactId}:` }, { type: 'image_url', image_url: { url, detail: e.data.detail } }] } : { role: 'user', content: `Image ${e.data.artifactId} is no longer available.` };
    }
    case 'SessionArtifactUploaded':
      return { role: 'user', content: `Uploaded files: ${e.data.artifacts.map((a) => `${a.filename} (${a.mimeType}, ${a.sizeBytes} bytes, artifact_id ${a.artifactId})`).join('; ')}` };
    default:
      return undefined;
  }
}
