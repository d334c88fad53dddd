import { canonicalArguments, canonicalEvents, RecordedEvent, RecordedTurn, recordedTurns, replayRange, ReplayDivergence } from './replay';
import type { ReplayOrigin } from './session-events';

/** One side of a turn as the diff shows it. */
export interface TurnSide {
  readonly tool_calls: readonly { readonly name: string; readonly arguments: unknown }[];
  readonly steps: readonly string[];
  readonly answer: string;
  readonly tokens: { readonly input_tokens: number; readonly output_tokens: number };
  readonly latency_ms: number;
  readonly outcome: string;
}

export interface TurnDiff {
  readonly input_event_id: string;
  readonly original: TurnSide;
  /** Absent when the replay did not reach the turn (it stopped before, or could not send its input). */
  readonly replay?: TurnSide;
  readonly same: { readonly tool_calls: boolean; readonly arguments: boolean; readonly steps: boolean; readonly answer: boolean; readonly events: boolean };
  readonly answer_similarity: number;
  readonly divergence?: ReplayDivergence;
}

export interface ReplayDiff {
  readonly turns: readonly TurnDiff[];
  readonly totals: {
    readonly turns: number;
    readonly replayed: number;
    readonly same_answers: number;
    readonly same_tool_calls: number;
    readonly same_events: number;
    readonly diverged: number;
    readonly tokens: { readonly original: { input_tokens: number; output_tokens: number }; readonly replay: { input_tokens: number; output_tokens: number } };
    readonly latency_ms: { readonly original: number; readonly replay: number };
  };
}

type Data = Record<string, unknown>;
const dataOf = (e: RecordedEvent): Data => (e.data ?? {}) as Data;

/**
 * The diff of a replay against its original, a pure function of their two streams (the replay's own events; the
 * original's, whose turns in the replay's range are paired in order with the replay's turns). A turn's divergence is
 * the `SessionReplayDiverged` stored after it; `same.events` says whether its events are equal in canonical form.
 */
export function replayDiff(original: readonly RecordedEvent[], replay: readonly RecordedEvent[]): ReplayDiff {
  const origin = dataOf(replay.find((e) => e.type === 'SessionCreated') ?? { type: '', data: {} }).replayOf as ReplayOrigin | undefined;
  const wanted = replayRange(recordedTurns(original), origin?.fromEventId, origin?.untilEventId);
  const replayed = recordedTurns(replay);
  const divergences = new Map<string, ReplayDivergence>();
  for (const e of replay) {
    if (e.type !== 'SessionReplayDiverged') continue;
    const d = dataOf(e);
    divergences.set(String(d.inputEventId), { kind: d.kind as ReplayDivergence['kind'], detail: String(d.detail), model_call: Number(d.modelCall) });
  }
  const turns = wanted.map((o, i): TurnDiff => {
    const r = replayed[i];
    const a = sideOf(o);
    const b = r ? sideOf(r) : undefined;
    const divergence = divergences.get(o.inputEventId);
    const names = (s: TurnSide) => JSON.stringify(s.tool_calls.map((c) => c.name));
    const calls = (s: TurnSide) => JSON.stringify(s.tool_calls.map((c) => [c.name, canonicalArguments(JSON.stringify(c.arguments))]));
    return {
      input_event_id: o.inputEventId,
      original: a,
      ...(b ? { replay: b } : {}),
      same: {
        tool_calls: !!b && names(a) === names(b),
        arguments: !!b && calls(a) === calls(b),
        steps: !!b && JSON.stringify(a.steps) === JSON.stringify(b.steps),
        answer: !!b && a.answer === b.answer,
        events: !!r && sameEvents(o.events, r.events),
      },
      answer_similarity: b ? answerSimilarity(a.answer, b.answer) : 0,
      ...(divergence ? { divergence } : {}),
    };
  });
  const sum = (sides: (TurnSide | undefined)[]) => sides.reduce((t, s) => ({ input_tokens: t.input_tokens + (s?.tokens.input_tokens ?? 0), output_tokens: t.output_tokens + (s?.tokens.output_tokens ?? 0) }), { input_tokens: 0, output_tokens: 0 });
  return {
    turns,
    totals: {
      turns: turns.length,
      replayed: turns.filter((t) => t.replay).length,
      same_answers: turns.filter((t) => t.same.answer).length,
      same_tool_calls: turns.filter((t) => t.same.arguments).length,
      same_events: turns.filter((t) => t.same.events).length,
      diverged: turns.filter((t) => t.divergence).length,
      tokens: { original: sum(turns.map((t) => t.original)), replay: sum(turns.map((t) => t.replay)) },
      latency_ms: { original: turns.reduce((n, t) => n + t.original.latency_ms, 0), replay: turns.reduce((n, t) => n + (t.replay?.latency_ms ?? 0), 0) },
    },
  };
}

function sameEvents(a: readonly RecordedEvent[], b: readonly RecordedEvent[]): boolean {
  const x = canonicalEvents(a);
  const y = canonicalEvents(b);
  return x.length === y.length && x.every((e, i) => e === y[i]);
}

function sideOf(turn: RecordedTurn): TurnSide {
  const started = turn.events.find((e) => e.type === 'SessionTurnStarted');
  const ended = turn.events.find((e) => e.type === 'SessionTurnEnded');
  const steps = [String(dataOf(started!).step)];
  let answer = '';
  const toolCalls: { name: string; arguments: unknown }[] = [];
  for (const e of turn.events) {
    const d = dataOf(e);
    if (e.type === 'SessionStepTransitioned') steps.push(String(d.toStep));
    else if (e.type === 'SessionAgentOutput') answer = String(d.content);
    else if (e.type === 'SessionStructuredOutput') answer = JSON.stringify(d.content);
    else if (e.type === 'SessionToolCalled') toolCalls.push({ name: String(d.toolConfigurationName), arguments: parsed(String(d.arguments)) });
  }
  const usage = (ended ? dataOf(ended).usage : undefined) as { input_tokens: number; output_tokens: number } | undefined;
  const at = (e?: RecordedEvent) => (e ? Date.parse(String(dataOf(e).createdAt)) : NaN);
  const latency = at(ended) - at(started);
  return { tool_calls: toolCalls, steps, answer, tokens: { input_tokens: usage?.input_tokens ?? 0, output_tokens: usage?.output_tokens ?? 0 }, latency_ms: Number.isFinite(latency) ? latency : 0, outcome: String(ended ? dataOf(ended).outcome : 'unfinished') };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return text;
  }
}

/**
 * How alike two answers are, 0 to 1: the Sørensen–Dice coefficient of their character bigrams (after lower-casing
 * and folding runs of white space), 1 for two equal texts, including two empty ones. Linear in the texts' length;
 * rejected: an edit distance (quadratic on long answers) and embeddings (a model call per turn).
 */
export function answerSimilarity(a: string, b: string): number {
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const x = norm(a);
  const y = norm(b);
  if (x === y) return 1;
  if (x.length < 2 || y.length < 2) return 0;
  const bigrams = new Map<string, number>();
  for (let i = 0; i < x.length - 1; i++) bigrams.set(x.slice(i, i + 2), (bigrams.get(x.slice(i, i + 2)) ?? 0) + 1);
  let shared = 0;
  for (let i = 0; i < y.length - 1; i++) {
    const g = y.slice(i, i + 2);
    const n = bigrams.get(g) ?? 0;
    if (n > 0) {
      shared++;
      bigrams.set(g, n - 1);
    }
  }
  return Math.round(((2 * shared) / (x.length - 1 + y.length - 1)) * 1000) / 1000;
}
