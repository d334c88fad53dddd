import type { CompactionConfig } from './agent-config';
import type { SessionApiEvent } from './session-events';

/**
 * How a compaction's history is cut into pieces that each fit the model's window (docs/agents.md, "Compaction in
 * pieces"). Sizes are in characters: prompts are estimated at 4 characters per token, as every prompt of a turn is.
 */
export const CHARS_PER_TOKEN = 4;
/** Share of the window one summarising prompt may take: the rest is the answer's. */
export const PROMPT_SHARE = 0.6;
/** Share of the window the running summary (and the final one) may take before it is condensed. */
export const SUMMARY_SHARE = 0.2;
/**
 * Characters a summarising prompt adds around the instructions, the summary and the piece: the headers of its user
 * message and what the estimator counts for each of its two messages.
 */
export const FRAME_CHARS = 64;
/** A piece smaller than this is no piece: instructions that leave less fail the compaction. */
export const MIN_PIECE_CHARS = 400;

export interface CompactionBudget {
  /** The most one summarising prompt may hold, framing included. */
  readonly promptChars: number;
  /** The most the running summary (and the final one) may hold. */
  readonly summaryChars: number;
  /** The most one piece of history may hold: the prompt less the instructions, the summary and the framing. */
  readonly pieceChars: number;
}

/** The least share of the window a summary is held to, however large the system prompt. */
export const MIN_SUMMARY_SHARE = 0.05;

/**
 * The sizes of a compaction's prompts. The summary is what the model reads after the system prompt (instructions,
 * memory blocks, skills: `systemTokens`), so it is held to SUMMARY_SHARE of the window, to half of what the system
 * prompt leaves when that is less, and never under MIN_SUMMARY_SHARE.
 */
export function compactionBudget(windowTokens: number, instructionsChars: number, systemTokens = 0): CompactionBudget {
  const promptChars = Math.floor(windowTokens * PROMPT_SHARE) * CHARS_PER_TOKEN;
  const summaryTokens = Math.max(windowTokens * MIN_SUMMARY_SHARE, Math.min(windowTokens * SUMMARY_SHARE, (windowTokens - systemTokens) / 2));
  const summaryChars = Math.floor(summaryTokens) * CHARS_PER_TOKEN;
  return { promptChars, summaryChars, pieceChars: promptChars - instructionsChars - summaryChars - FRAME_CHARS };
}

/** A run of consecutive events summarised by one call. */
export interface CompactionPiece {
  readonly eventIds: readonly string[];
  readonly text: string;
  /** Characters left out of events larger than a piece. */
  readonly cutChars: number;
}

/** `text` within `maxChars`: whole, or its head and tail with a marker saying how much was left out. */
export function cutToFit(text: string, maxChars: number): { readonly text: string; readonly leftOut: number } {
  if (text.length <= maxChars) return { text, leftOut: 0 };
  // The marker's length depends on the count it states; the count's digits are at most those of the whole length.
  const markerChars = marker(text.length).length;
  const keep = Math.max(0, maxChars - markerChars);
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  const leftOut = text.length - head - tail;
  return { text: `${text.slice(0, head)}${marker(leftOut)}${tail ? text.slice(text.length - tail) : ''}`, leftOut };
}

const marker = (n: number) => `\n[… ${n} characters left out …]\n`;

/** What the summarising model reads of an event (none for events it does not read: thinking, tool calls by policy). */
export function compactionLine(e: SessionApiEvent, policy: NonNullable<CompactionConfig['tool_event_policy']>): string | undefined {
  switch (e.type) {
    case 'SessionInputReceived':
      return `User: ${e.data.messages.map((m) => (m.type === 'text' ? m.content : `(loads skill ${m.skill_name})`)).join('\n')}`;
    case 'SessionSkillLoaded':
      return `Skill ${e.data.skillName} loaded:\n${e.data.content}`;
    case 'SessionAgentOutput':
      return `Assistant: ${e.data.content}`;
    case 'SessionStructuredOutput':
      return `Assistant: ${JSON.stringify(e.data.content)}`;
    case 'SessionToolCalled':
      return policy === 'include_all' ? `Tool call ${e.data.toolConfigurationName}: ${JSON.stringify(e.data.toolInput)}` : undefined;
    case 'SessionToolReturned':
      return policy !== 'exclude' ? `Tool result ${e.data.toolConfigurationName}: ${JSON.stringify(e.data.toolOutput)}` : undefined;
    default:
      return undefined;
  }
}

const SEPARATOR = '\n\n';

/** An event as the summarising model reads it: its line, or none (it still goes with the piece it falls in). */
export interface CompactionLine {
  readonly eventId: string;
  readonly text?: string;
}

export const compactionLines = (events: readonly SessionApiEvent[], policy: NonNullable<CompactionConfig['tool_event_policy']>): CompactionLine[] =>
  events.map((e) => ({ eventId: e.data.eventId, text: compactionLine(e, policy) }));

/**
 * The next piece from `lines[from]` on, of at most `room` characters, greedily: it closes before the first line that
 * does not fit; a line larger than `room` is cut to its head and tail and makes a piece of its own. Lines the model
 * does not read cost nothing and go with the piece they fall in (those at the end with the last piece).
 */
export function takePiece(lines: readonly CompactionLine[], from: number, room: number): { readonly piece: CompactionPiece; readonly next: number } {
  const eventIds: string[] = [];
  const texts: string[] = [];
  let chars = 0;
  let cutChars = 0;
  let at = from;
  for (; at < lines.length; at++) {
    const line = lines[at];
    if (line.text === undefined) {
      eventIds.push(line.eventId);
      continue;
    }
    const cut = cutToFit(line.text, room);
    const added = (texts.length ? SEPARATOR.length : 0) + cut.text.length;
    if (texts.length && chars + added > room) break;
    chars += added;
    texts.push(cut.text);
    eventIds.push(line.eventId);
    cutChars += cut.leftOut;
  }
  return { piece: { eventIds, text: texts.join(SEPARATOR), cutChars }, next: at };
}

/** The events cut into pieces of at most `pieceChars` characters each (takePiece with the same room each time). */
export function splitIntoPieces(events: readonly SessionApiEvent[], policy: NonNullable<CompactionConfig['tool_event_policy']>, pieceChars: number): CompactionPiece[] {
  const lines = compactionLines(events, policy);
  const pieces: CompactionPiece[] = [];
  for (let at = 0; at < lines.length; ) {
    const { piece, next } = takePiece(lines, at, pieceChars);
    pieces.push(piece);
    at = next;
  }
  return pieces;
}
