import { DomainError, invalid } from '@lib/platform';
import type { AgentConfig } from '../../domain/agent-config';
import { effectiveCompaction } from '../../domain/agent-config';
import { CHARS_PER_TOKEN, compactionBudget, CompactionBudget, compactionLines, cutToFit, FRAME_CHARS, MIN_PIECE_CHARS, PROMPT_SHARE, takePiece } from '../../domain/compaction-pieces';
import { pinnedEventIds } from '../../domain/compaction-pins';
import { SUMMARY_HEADING, type PromptMessage } from '../../domain/history';
import type { ActiveSession } from '../../domain/session';
import type { CompactionCall, SessionApiEvent } from '../../domain/session-events';
import type { ModelAnswer, ModelCallOptions } from './model-call';
import { estimateTokens } from './turn-parts';

const DEFAULT_PROMPT =
  'Summarise the conversation below so that it can replace it: keep every fact, decision, open question, name, number and tool result the assistant still needs, and what the user wants. Write it as notes, not as a dialogue.';
const ROLLING = 'When a summary so far is given, return it updated with the conversation that continued: one set of notes covering both, later facts correcting earlier ones.';
const CONDENSE = 'Shorten the notes below so that they can replace them: keep every fact, decision, open question, name, number and tool result the assistant still needs, and what the user wants; drop repetition and wording.';

/**
 * The events a compaction replaces: all visible ones before the last `keep_recent_inputs` inputs, or up to an event,
 * less the pinned ones (compaction-pins.ts), which stay in the model's view.
 */
export function eventsToCompact(session: ActiveSession, config: AgentConfig, upToEventId?: string, turnId?: string): { events: SessionApiEvent[]; pinned: string[] } {
  const visible = session.events.filter((e) => !session.hidden.has(e.data.eventId) && e.type !== 'SessionCompacted');
  let candidates: SessionApiEvent[];
  if (upToEventId) {
    const at = visible.findIndex((e) => e.data.eventId === upToEventId);
    if (at < 0) throw invalid('session.unknown_event', `compact_up_to_event_id "${upToEventId}" is not a visible event of this session`, { compact_up_to_event_id: 'not a visible event of the session' });
    candidates = visible.slice(0, at + 1);
  } else {
    const keep = effectiveCompaction(config).keep_recent_inputs;
    const inputs = visible.map((e, i) => (e.type === 'SessionInputReceived' ? i : -1)).filter((i) => i >= 0);
    candidates = inputs.length <= keep ? [] : visible.slice(0, inputs[inputs.length - keep]);
  }
  const pins = pinnedEventIds(visible, config, turnId);
  return { events: candidates.filter((e) => !pins.has(e.data.eventId)), pinned: candidates.filter((e) => pins.has(e.data.eventId)).map((e) => e.data.eventId) };
}

type Call = (options: ModelCallOptions) => Promise<ModelAnswer>;

/**
 * The instructions of a compaction's calls (a piece's and a condensing one's) and the sizes they leave within the
 * window; a 422 when they leave no room for a piece (checked before a compaction asked for by an input starts).
 */
export function compactionPrompts(config: AgentConfig, message: string | undefined, windowTokens: number, systemTokens = 0): { instructions: string; condensing: string; budget: CompactionBudget } {
  const extra = message ?? effectiveCompaction(config).compaction_message;
  const summaryTokens = Math.floor(compactionBudget(windowTokens, 0, systemTokens).summaryChars / CHARS_PER_TOKEN);
  const limit = `Keep the notes under about ${summaryTokens} tokens.`;
  const instructions = [DEFAULT_PROMPT, ROLLING, limit, extra].filter(Boolean).join('\n\n');
  const condensing = [CONDENSE, limit, extra].filter(Boolean).join('\n\n');
  const budget = compactionBudget(windowTokens, Math.max(instructions.length, condensing.length), systemTokens);
  if (budget.pieceChars < MIN_PIECE_CHARS) {
    throw new DomainError('unprocessable', 'agent.compaction_no_room', `The compaction instructions (about ${Math.ceil(instructions.length / CHARS_PER_TOKEN)} tokens) leave no room for the conversation within ${PROMPT_SHARE * 100} % of the model's context window of ${windowTokens} tokens: shorten compaction_message`);
  }
  return { instructions, condensing, budget };
}

export interface Summary {
  readonly summary: string;
  readonly usage: { input_tokens: number; output_tokens: number };
  readonly turns: number;
  readonly pieces: CompactionCall[];
}

/**
 * The summary of `events` and of the previous summary, made piece by piece so that every prompt stays within
 * PROMPT_SHARE of the model's window: each piece is summarised with the summary so far (rolling), a summary over
 * its share is condensed, and one still over it is cut. Every call is recorded with its prompt size and usage.
 */
export async function summarise(call: Call, config: AgentConfig, session: ActiveSession, events: readonly SessionApiEvent[], message: string | undefined, signal: AbortSignal, windowTokens: number, systemTokens = 0): Promise<Summary> {
  const compaction = effectiveCompaction(config);
  const { instructions, condensing, budget } = compactionPrompts(config, message, windowTokens, systemTokens);
  const pieces: CompactionCall[] = [];
  const usage = { input_tokens: 0, output_tokens: 0 };
  const ask = async (system: string, user: string, record: Omit<CompactionCall, 'promptTokens' | 'usage'>) => {
    const messages: PromptMessage[] = [{ role: 'system', content: system }, { role: 'user', content: user }];
    const answer = await call({ messages, tools: [], signal });
    usage.input_tokens += answer.usage.input_tokens;
    usage.output_tokens += answer.usage.output_tokens;
    pieces.push({ ...record, promptTokens: estimateTokens(messages), usage: answer.usage });
    return answer.content;
  };
  const previous = [...session.events].reverse().find((e) => e.type === 'SessionCompacted');
  let summary = await fitSummary(previous?.type === 'SessionCompacted' ? previous.data.summaryText : '', budget, condensing, ask, pieces);
  const lines = compactionLines(events, compaction.tool_event_policy);
  for (let at = 0; at < lines.length; ) {
    // The summary so far is within its share: a piece gets what it leaves, at least `budget.pieceChars`.
    const { piece, next } = takePiece(lines, at, budget.promptChars - Math.max(instructions.length, condensing.length) - summary.length - FRAME_CHARS);
    at = next;
    if (!piece.text) continue;
    const user = summary ? `Summary so far:\n${summary}\n\nConversation continued:\n${piece.text}` : `Conversation:\n${piece.text}`;
    const record = { kind: 'piece' as const, events: piece.eventIds.length, firstEventId: piece.eventIds[0], lastEventId: piece.eventIds.at(-1)!, cutChars: piece.cutChars };
    summary = await fitSummary(await ask(instructions, user, record), budget, condensing, ask, pieces);
  }
  return { summary, usage, turns: events.filter((e) => e.type === 'SessionInputReceived').length, pieces };
}

/** Condenses a summary over its share (twice at most), then cuts what still is: the next prompt and the final view fit. */
async function fitSummary(text: string, budget: CompactionBudget, condensing: string, ask: (system: string, user: string, record: Omit<CompactionCall, 'promptTokens' | 'usage'>) => Promise<string>, pieces: CompactionCall[]): Promise<string> {
  let summary = text;
  for (let attempt = 0; attempt < 2 && summary.length > budget.summaryChars; attempt++) {
    const input = cutToFit(summary, budget.promptChars - condensing.length - FRAME_CHARS);
    summary = await ask(condensing, `Notes to shorten:\n${input.text}`, { kind: 'condense', events: 0, cutChars: input.leftOut });
  }
  if (summary.length <= budget.summaryChars) return summary;
  const cut = cutToFit(summary, budget.summaryChars);
  pieces.push({ kind: 'cut', events: 0, cutChars: cut.leftOut, promptTokens: 0, usage: { input_tokens: 0, output_tokens: 0 } });
  return cut.text;
}

/**
 * Why a prompt does not fit the window, part by part: the instructions (with memory and skills), the compaction's
 * summary, and what compaction keeps (the last inputs and what followed them, the pinned tool results).
 */
export function overflowMessage(messages: readonly PromptMessage[], windowTokens: number, config: AgentConfig): string {
  const total = estimateTokens(messages);
  const compaction = effectiveCompaction(config);
  if (!compaction.enabled) return `The conversation (about ${total} tokens) exceeds the model's context window of ${windowTokens} tokens and compaction is off; compact the session`;
  const system = estimateTokens(messages.filter((m) => m.role === 'system'));
  if (system > windowTokens) return `The step's instructions and memory alone (about ${system} tokens) exceed the model's context window of ${windowTokens} tokens: compaction cannot help; shorten them or use a model with a larger window`;
  const summary = estimateTokens(messages.filter((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(SUMMARY_HEADING)));
  const kept = total - system - summary;
  return `The conversation (about ${total} tokens) exceeds the model's context window of ${windowTokens} tokens even after compaction: the instructions and memory take about ${system}, the summary about ${summary}, and what compaction keeps about ${kept} (the last ${compaction.keep_recent_inputs} input(s) and what followed them, with the latest tool results the steps read)`;
}
