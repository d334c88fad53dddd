import { invalid } from '@lib/platform/kernel';
import type { AgentInput, ReplayDivergenceKind, SessionEvent, TurnUsage } from './session-events';

/**
 * Replays (docs/replay.md) as folds of two streams: which recorded turns of a session a replay re-runs (the plan),
 * what each recorded turn answered (the replay source reads it), the canonical form two runs are compared in, and
 * the diff between an original and its replay. Pure: the use case reads the streams, these read events.
 */

/** A stored event as these functions read it (the store's record, narrowed; `position` where known). */
export interface RecordedEvent {
  readonly type: string;
  readonly data: unknown;
  readonly position?: number;
}

/** One model answer as the record holds it: the text (or structured value as JSON), or the tool calls it made. */
export interface RecordedAnswer {
  readonly step: string;
  readonly content: string;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly usage: TurnUsage;
}

export interface RecordedToolOutput {
  readonly toolCallId: string;
  readonly name: string;
  /** The model's arguments as canonical JSON (what a live_model replay matches a call on). */
  readonly arguments: string;
  readonly output: Record<string, unknown>;
  readonly error: boolean;
}

/** What starts a recorded turn: a message (replayed), or an input a replay cannot re-send (named in the diff). */
export type TurnTrigger =
  | { readonly kind: 'message'; readonly messages: readonly AgentInput[]; readonly step: string; readonly externalId?: string; readonly behavior?: 'steer' | 'follow_up' }
  | { readonly kind: 'client_tool_output' | 'approval' | 'compaction' | 'other' };

/** One turn of the original session: its input, its events (the input through the turn's end) and what it answered. */
export interface RecordedTurn {
  readonly inputEventId: string;
  readonly trigger: TurnTrigger;
  readonly agentRevision: number;
  readonly events: readonly RecordedEvent[];
  readonly answers: readonly RecordedAnswer[];
  readonly toolOutputs: readonly RecordedToolOutput[];
  /** Why a replay cannot re-run it (it then stops there); absent when it can. */
  readonly unreplayable?: string;
}

type Data = Record<string, unknown>;
const dataOf = (e: RecordedEvent): Data => (e.data ?? {}) as Data;
const TURN_INPUTS = new Set(['SessionInputReceived', 'SessionSkillLoaded', 'SessionToolReturned', 'SessionToolApprovalResolved', 'SessionArtifactUploaded']);

/** The recorded turns of a session's own stream (not a fork's inherited history), oldest first. */
export function recordedTurns(events: readonly RecordedEvent[]): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  let before: RecordedEvent[] = [];
  let current: { started: RecordedEvent; events: RecordedEvent[]; trigger: RecordedEvent[] } | undefined;
  for (const e of events) {
    if (e.type === 'SessionTurnStarted') {
      current = { started: e, events: [...before, e], trigger: before };
      before = [];
      continue;
    }
    if (!current) {
      if (TURN_INPUTS.has(e.type) || e.type === 'SessionInterrupted') before.push(e);
      continue;
    }
    current.events.push(e);
    if (e.type === 'SessionTurnEnded') {
      turns.push(turnOf(current.started, current.trigger, current.events));
      current = undefined;
    }
  }
  return turns;
}

function turnOf(started: RecordedEvent, trigger: readonly RecordedEvent[], events: readonly RecordedEvent[]): RecordedTurn {
  const input = trigger.find((e) => e.type === 'SessionInputReceived');
  const body = events.slice(trigger.length);
  const firstId = (trigger[0] ? dataOf(trigger[0]).eventId : undefined) ?? body.map((e) => dataOf(e).eventId).find(Boolean);
  let kind: TurnTrigger;
  if (input) {
    const d = dataOf(input);
    kind = { kind: 'message', messages: d.messages as AgentInput[], step: String(d.step), ...(d.externalId ? { externalId: String(d.externalId) } : {}), ...(d.behavior ? { behavior: d.behavior as 'steer' | 'follow_up' } : {}) };
  } else if (trigger.some((e) => e.type === 'SessionToolApprovalResolved')) kind = { kind: 'approval' };
  else if (trigger.some((e) => e.type === 'SessionToolReturned')) kind = { kind: 'client_tool_output' };
  else if (body.some((e) => e.type === 'SessionCompactionStarted')) kind = { kind: 'compaction' };
  else kind = { kind: 'other' };
  const answers: RecordedAnswer[] = [];
  const outputs: RecordedToolOutput[] = [];
  const argsOf = new Map<string, string>();
  let lastModelCall: string | undefined;
  for (const e of body) {
    const d = dataOf(e);
    if (e.type === 'SessionToolCalled') {
      const call = { id: String(d.toolCallId), name: String(d.toolConfigurationName), arguments: String(d.arguments) };
      argsOf.set(call.id, canonicalArguments(call.arguments));
      if (d.modelCallId === lastModelCall) {
        const last = answers[answers.length - 1];
        answers[answers.length - 1] = { ...last, toolCalls: [...last.toolCalls, call] };
      } else answers.push({ step: String(d.step), content: '', toolCalls: [call], usage: usageOf(d.usage) });
      lastModelCall = String(d.modelCallId);
      continue;
    }
    lastModelCall = undefined;
    if (e.type === 'SessionAgentOutput') answers.push({ step: String(d.step), content: String(d.content), toolCalls: [], usage: usageOf(d.usage) });
    else if (e.type === 'SessionStructuredOutput') answers.push({ step: String(d.step), content: JSON.stringify(d.content), toolCalls: [], usage: usageOf(d.usage) });
    else if (e.type === 'SessionToolReturned') outputs.push({ toolCallId: String(d.toolCallId), name: String(d.toolConfigurationName), arguments: argsOf.get(String(d.toolCallId)) ?? '{}', output: d.toolOutput as Data, error: d.error === true });
  }
  return {
    inputEventId: String(firstId ?? ''),
    trigger: kind,
    agentRevision: Number(dataOf(started).agentRevision ?? 0),
    events,
    answers,
    toolOutputs: outputs,
    ...(unreplayableReason(kind, trigger, body) ?? {}),
  };
}

function unreplayableReason(trigger: TurnTrigger, before: readonly RecordedEvent[], body: readonly RecordedEvent[]): { unreplayable: string } | undefined {
  if (trigger.kind === 'client_tool_output') return { unreplayable: 'it resumed on client tool outputs' };
  if (trigger.kind === 'approval') return { unreplayable: 'it resumed on an approval decision' };
  if (trigger.kind === 'compaction') return { unreplayable: 'it was a compaction asked for by an input' };
  if (trigger.kind === 'other') return { unreplayable: 'it has no input a replay can send' };
  if (before.some((e) => e.type === 'SessionArtifactUploaded')) return { unreplayable: 'files were uploaded before its input' };
  const inside: Record<string, string> = {
    SessionInputReceived: 'a steer arrived while it ran',
    SessionInterrupted: 'it was interrupted',
    SessionToolApprovalRequested: 'it waited for an approval',
    SessionClientToolPending: 'it waited for client tool outputs',
    SessionCompactionStarted: 'it compacted the session',
    SessionArtifactUploaded: 'a tool stored an artifact',
    SessionImageRead: 'a tool loaded an image',
  };
  const hit = body.slice(1).find((e) => inside[e.type]);
  return hit ? { unreplayable: inside[hit.type] } : undefined;
}

const usageOf = (u: unknown): TurnUsage => {
  const v = (u ?? {}) as Partial<TurnUsage>;
  return { input_tokens: Number(v.input_tokens ?? 0), output_tokens: Number(v.output_tokens ?? 0) };
};

/** JSON with object keys sorted at every depth: two values that are equal print alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v as Data).sort().map((k) => [k, sortKeys((v as Data)[k])]));
  return v;
}

/** A model's tool arguments (JSON text) as canonical JSON; text that is not JSON is kept as it is. */
export function canonicalArguments(text: string): string {
  try {
    return canonicalJson(text ? JSON.parse(text) : {});
  } catch {
    return text;
  }
}

/** The turns a replay re-runs: from the turn whose input is `fromEventId` (else the first), up to the turn holding `untilEventId`. */
export function replayRange(turns: readonly RecordedTurn[], fromEventId?: string, untilEventId?: string): RecordedTurn[] {
  let start = 0;
  if (fromEventId !== undefined) {
    start = turns.findIndex((t) => t.inputEventId === fromEventId);
    if (start < 0) throw invalid('replay.invalid_range', `from_event_id "${fromEventId}" is not the input of a turn of the session`, { from_event_id: 'not the input of a turn of the session' });
  }
  let end = turns.length;
  if (untilEventId !== undefined) {
    const at = turns.findIndex((t) => t.events.some((e) => dataOf(e).eventId === untilEventId));
    if (at < start) throw invalid('replay.invalid_range', `until_event_id "${untilEventId}" is not an event of a turn ${fromEventId ? 'from from_event_id on' : 'of the session'}`, { until_event_id: 'not an event of a replayed turn' });
    end = at + 1;
  }
  return turns.slice(start, end);
}

/** Fields that must differ between two runs of the same turns: ids the service draws, times, the process. */
const VOLATILE_FIELDS = new Set(['eventId', 'turnId', 'createdAt', 'holder', 'modelCallId', 'timerId', 'expiresAt']);
const DRAWN_ID = /^(aev|art|mc|turn|approval)[_-][0-9a-f-]{8,}$/;

/**
 * The canonical form in which a replay's events equal its original's (docs/replay.md): each event as canonical JSON
 * of `{type, data}` without the fields that must differ (event ids, turn ids, times, the running process, model call
 * ids, approval timers), and every id the service drew that another field refers to (an event id in a pending call,
 * an artifact id) replaced by its order of first appearance, so references still compare. Session keys are not in
 * turn events. Book-keeping of the replay itself (`SessionCreated`, `SessionReplayDiverged`) is left out, and the outputs
 * of one round's concurrent calls are taken in call id order.
 */
export function canonicalEvents(events: readonly RecordedEvent[]): string[] {
  const drawn = new Map<string, string>();
  const scrub = (v: unknown): unknown => {
    if (typeof v === 'string' && DRAWN_ID.test(v)) {
      if (!drawn.has(v)) drawn.set(v, `${v.slice(0, v.search(/[_-]/))}#${drawn.size}`);
      return drawn.get(v);
    }
    if (Array.isArray(v)) return v.map(scrub);
    if (v && typeof v === 'object') {
      // A dropped id is still numbered where it stands, so a later reference to it gets the same number in both runs.
      for (const [k, x] of Object.entries(v as Data)) if (VOLATILE_FIELDS.has(k)) scrub(x);
      return Object.fromEntries(Object.entries(v as Data).filter(([k]) => !VOLATILE_FIELDS.has(k)).map(([k, x]) => [k, scrub(x)]));
    }
    return v;
  };
  return inCallOrder(events.filter((e) => e.type !== 'SessionCreated' && e.type !== 'SessionReplayDiverged')).map((e) => canonicalJson({ type: e.type, data: scrub(e.data) }));
}

/**
 * The outputs of one round's calls run concurrently: the order in which they finish is not the configuration's doing,
 * so each run of consecutive `SessionToolReturned` is put in tool call id order.
 */
function inCallOrder(events: readonly RecordedEvent[]): RecordedEvent[] {
  const out = [...events];
  const id = (e: RecordedEvent) => String(dataOf(e).toolCallId);
  for (let i = 0; i < out.length; ) {
    let j = i;
    while (j < out.length && out[j].type === 'SessionToolReturned') j++;
    if (j - i > 1) out.splice(i, j - i, ...out.slice(i, j).sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)));
    i = Math.max(j, i + 1);
  }
  return out;
}

export interface ReplayDivergence {
  readonly kind: ReplayDivergenceKind;
  readonly detail: string;
  readonly model_call: number;
}

export type { SessionEvent };
