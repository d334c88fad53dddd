import { inputText, SessionEvent } from './session-events';

/** A tool call as scorers compare them: the configuration the model called and its arguments. */
export interface RecordedToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/**
 * One finished turn as the scorers read it (docs/agents.md, "Scorers"), folded from the session's events: the
 * inputs it answered, its answer (text or structured), the tool calls it made and the texts retrieval tools
 * returned to it.
 */
export interface TurnRecord {
  readonly turnId: string;
  readonly agentKey: string;
  readonly sessionKey: string;
  readonly agentRevision: number;
  readonly outcome: string;
  readonly input: string;
  /** The last text answer; null when the turn gave none. */
  readonly answer: string | null;
  readonly structured: { readonly schemaName: string; readonly content: unknown; readonly step: string } | null;
  /** The step the turn answered in (its last output's, else the step it started in). */
  readonly step: string;
  readonly toolCalls: readonly RecordedToolCall[];
  readonly retrievedTexts: readonly string[];
}

type Ev = Pick<SessionEvent, 'type' | 'data'>;

/** The turn `turnId` of a session's events, once it has ended; undefined otherwise. */
export function turnRecordOf(events: readonly Ev[], turnId: string): TurnRecord | undefined {
  const created = events.find((e): e is Extract<SessionEvent, { type: 'SessionCreated' }> => e.type === 'SessionCreated');
  const start = events.findIndex((e) => e.type === 'SessionTurnStarted' && (e as Extract<SessionEvent, { type: 'SessionTurnStarted' }>).data.turnId === turnId);
  const end = events.findIndex((e) => e.type === 'SessionTurnEnded' && (e as Extract<SessionEvent, { type: 'SessionTurnEnded' }>).data.turnId === turnId);
  if (!created || start < 0 || end < start) return undefined;
  const started = events[start] as Extract<SessionEvent, { type: 'SessionTurnStarted' }>;
  const ended = events[end] as Extract<SessionEvent, { type: 'SessionTurnEnded' }>;
  // The inputs this turn answered: those received since the previous turn ended, and during this one (steers).
  let from = 0;
  for (let i = start - 1; i >= 0; i--) if (events[i].type === 'SessionTurnEnded') { from = i + 1; break; }
  const inputs: string[] = [];
  let answer: string | null = null;
  let structured: TurnRecord['structured'] = null;
  let step = started.data.step;
  const toolCalls: RecordedToolCall[] = [];
  const retrievedTexts: string[] = [];
  for (const e of events.slice(from, end + 1) as SessionEvent[]) {
    switch (e.type) {
      case 'SessionInputReceived':
        inputs.push(inputText(e.data.messages));
        break;
      case 'SessionAgentOutput':
        answer = e.data.content;
        step = e.data.step;
        break;
      case 'SessionStructuredOutput':
        structured = { schemaName: e.data.schemaName, content: e.data.content, step: e.data.step };
        step = e.data.step;
        break;
      case 'SessionToolCalled':
        toolCalls.push({ name: e.data.toolConfigurationName, arguments: e.data.toolInput });
        break;
      case 'SessionToolReturned':
        if (!e.data.error) retrievedTexts.push(...retrievedTextsOf(e.data.toolOutput));
        break;
      default:
        break;
    }
  }
  return { turnId, agentKey: created.data.agentKey, sessionKey: created.data.sessionKey, agentRevision: started.data.agentRevision, outcome: ended.data.outcome, input: inputs.join('\n'), answer, structured, step, toolCalls, retrievedTexts };
}

/** The texts a retrieval tool returned, by the output shapes of corpora_search, web_search and get_document_text. */
export function retrievedTextsOf(output: Record<string, unknown>): string[] {
  const texts: string[] = [];
  const list = (v: unknown, field: string) => (Array.isArray(v) ? v.map((r) => (r && typeof r === 'object' ? (r as Record<string, unknown>)[field] : undefined)).filter((t): t is string => typeof t === 'string' && t.length > 0) : []);
  texts.push(...list(output.search_results, 'text'), ...list(output.results, 'snippet'));
  if (typeof output.document_id === 'string' && typeof output.text === 'string') texts.push(output.text);
  return texts;
}

/** JSON with object keys sorted at every level: two argument objects are the same call when these are equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The fraction of the baseline's tool calls (name and canonical arguments, each matched once) the turn made too;
 * a baseline without calls scores 1 when the turn made none either, 0 otherwise.
 */
export function sameToolCalls(turn: readonly RecordedToolCall[], baseline: readonly RecordedToolCall[]): { score: number; reason: string } {
  if (!baseline.length) return turn.length ? { score: 0, reason: `the baseline made no tool call, the turn made ${turn.length}` } : { score: 1, reason: 'neither made a tool call' };
  const left = new Map<string, number>();
  for (const c of turn) left.set(`${c.name}${canonicalJson(c.arguments)}`, (left.get(`${c.name}${canonicalJson(c.arguments)}`) ?? 0) + 1);
  let matched = 0;
  for (const c of baseline) {
    const key = `${c.name}${canonicalJson(c.arguments)}`;
    const n = left.get(key) ?? 0;
    if (n > 0) {
      matched++;
      left.set(key, n - 1);
    }
  }
  return { score: matched / baseline.length, reason: `${matched} of the baseline's ${baseline.length} tool calls made` };
}

/**
 * A judge's answer, parsed strictly: one JSON object `{"score": 0..1, "reason"?: string}` and nothing else (no
 * prose, no fences, no other field). Anything else is an error naming what was wrong.
 */
export function parseJudgeAnswer(text: string): { score: number; reason?: string } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch {
    return { error: `the judge did not answer a JSON object: ${JSON.stringify(text.slice(0, 120))}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'the judge answered JSON that is not an object' };
  const { score, reason, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length) return { error: `the judge answered unexpected fields: ${Object.keys(rest).join(', ')}` };
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return { error: 'the judge answered no "score" between 0 and 1' };
  if (reason !== undefined && typeof reason !== 'string') return { error: 'the judge answered a "reason" that is not a string' };
  return reason === undefined ? { score } : { score, reason };
}
