import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK, CommandContext, DomainError, ID_GENERATOR, IdGenerator, invalid, notFound } from '@lib/platform';
import { ToolAttachments, ToolConfigurations } from '@lib/tools';
import type { ActiveAgent } from '../../domain/agent';
import { recordedTurns, replayRange, RecordedEvent, RecordedTurn, ReplayDivergence } from '../../domain/replay';
import { ReplayDiff, replayDiff } from '../../domain/replay-diff';
import type { ForkOrigin, ReplayOrigin, SessionEvent } from '../../domain/session-events';
import { AgentRevisions } from '../revisions/agent-revisions';
import type { InputRequest } from '../runs/agent-runs.port';
import { sessionStream } from '../sessions/session-store';
import { Sessions } from '../sessions/sessions';
import { toolCallHasSideEffects } from '../tools/tool-catalogue';
import { PromptBuilder } from '../turn/prompt-builder';
import { SessionInputs } from '../turn/session-inputs';
import type { TurnSetup } from '../turn/turn-setup';
import { BaselinePrompt, ReplayDiverged, TurnReplaySource } from './replay-source';

/** How to replay (the route's body, checked at the edge). */
export interface ReplayOptions {
  readonly agentRevision: number | 'current';
  readonly mode: ReplayOrigin['mode'];
  readonly fromEventId?: string;
  readonly untilEventId?: string;
  readonly allowSideEffects: boolean;
  /** The replay session's key (an evaluation names its replays); absent: a new `rpl_…` key. */
  readonly key?: string;
}

export interface ReplayResult {
  readonly session_key: string;
  readonly replay_of: Record<string, unknown>;
  readonly diff: ReplayDiff;
}

/**
 * Replays a session (docs/replay.md): a new session of the agent, pinned to the chosen revision and marked
 * `replay_of`, that re-sends each recorded input of the original through the normal turn (SessionInputs → TurnRunner →
 * ToolRound), answered by a {@link TurnReplaySource}; with `fromEventId` it is a fork of the original just before that
 * input. It stops at the first turn it cannot re-run or (recorded mode) that diverged, each stored as
 * `SessionReplayDiverged`. The diff is a fold of the two streams, also served later (`diff`).
 */
@Injectable()
export class Replays {
  constructor(
    private readonly sessions: Sessions,
    private readonly inputs: SessionInputs,
    private readonly revisions: AgentRevisions,
    private readonly prompts: PromptBuilder,
    private readonly toolConfigs: ToolConfigurations,
    private readonly toolServers: ToolAttachments,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async replay(agentKey: string, sessionKey: string, options: ReplayOptions, ctx: CommandContext): Promise<ReplayResult> {
    const agent = await this.sessions.agent(agentKey);
    const original = await this.sessions.active(agentKey, sessionKey);
    const revision = options.agentRevision === 'current' ? agent.revision : options.agentRevision;
    const config = revision === agent.revision ? agent.config : await this.sessions.pinnedConfig(agent, revision);
    const own = await this.sessions.store.readRaw(original.streamId);
    const turns = replayRange(recordedTurns(own), options.fromEventId, options.untilEventId);
    if (!turns.length) throw invalid('replay.nothing_to_replay', `Session "${sessionKey}" has no recorded turn to replay`, { session_key: 'no recorded turn' });
    const replayOf: ReplayOrigin = { sessionKey, mode: options.mode, agentRevision: revision, ...(options.fromEventId ? { fromEventId: options.fromEventId } : {}), ...(options.untilEventId ? { untilEventId: options.untilEventId } : {}), allowSideEffects: options.allowSideEffects };
    const forkedFrom = options.fromEventId ? this.forkBefore(agent, original.streamId, sessionKey, own, options.fromEventId) : original.session.forkedFrom;
    const key = options.key ?? `rpl_${this.ids.uuid().replace(/-/g, '')}`;
    const s = original.session;
    await this.sessions.create(
      agentKey,
      { key, name: key, ...(s.fields.description !== undefined ? { description: s.fields.description } : {}), metadata: { ...s.fields.metadata }, tti_minutes: s.fields.ttiMinutes, secrets: this.sessions.openSecrets(s), agent_revision: revision },
      ctx,
      { replayOf, ...(forkedFrom ? { forkedFrom } : {}), ...(s.compaction ? { compaction: s.compaction } : {}) },
    );
    const baselines = new Map<number, BaselinePrompt>();
    let diff: ReplayDiff | undefined;
    const run = async () => {
      for (const turn of turns) {
        const stopped = await this.replayTurn(agent, key, turn, replayOf, config.steps, ctx, baselines);
        if (stopped) break;
      }
      // The diff of the original as replayed and the replay's events (held ones included: the diff reads no position).
      diff = replayDiff(own, await this.sessions.store.readRaw(sessionStream(agent.agentId, key)));
    };
    // A recorded replay's turns are held in memory and committed in one append at its end (one commit instead of
    // one per turn, and no re-read of its own stream per input): nobody else writes the new session meanwhile, and
    // nothing waits on the log for its events (no model call, no usage record, no webhook). Live modes store as
    // they go (their turns take the model's time; a reader may follow them). docs/replay.md, "Cost".
    if (options.mode === 'recorded') await this.sessions.store.holding(agent.agentId, key, run);
    else await run();
    const view = await this.sessions.get(agentKey, key);
    return { session_key: key, replay_of: view.replay_of as Record<string, unknown>, diff: diff ?? (await this.diff(agentKey, key)) };
  }

  /** The diff of a replay session against its original, recomputed from both streams. 404 when the session is no replay. */
  async diff(agentKey: string, replayKey: string): Promise<ReplayDiff> {
    const replay = await this.sessions.active(agentKey, replayKey);
    const origin = replay.session.replayOf;
    if (!origin) throw notFound('replay.not_found', `Session "${replayKey}" is not a replay`, replayKey);
    const original = await this.sessions.active(agentKey, origin.sessionKey);
    const [a, b] = await Promise.all([this.sessions.store.readRaw(original.streamId), this.sessions.store.readRaw(replay.streamId)]);
    return replayDiff(a, b);
  }

  /** Runs one recorded turn in the replay; true when the replay stops after it (not replayable, or diverged). */
  private async replayTurn(agent: ActiveAgent, key: string, turn: RecordedTurn, origin: ReplayOrigin, steps: Readonly<Record<string, unknown>>, ctx: CommandContext, baselines: Map<number, BaselinePrompt>): Promise<boolean> {
    const stop = async (detail: string) => (await this.recordDivergence(agent, key, turn, { kind: 'not_replayable', detail: `${detail}; the replay stops before it`, model_call: 0 }, ctx), true);
    if (turn.unreplayable) return stop(`the turn cannot be replayed: ${turn.unreplayable}`);
    const inputs = await this.inputsOf(agent, key, turn, steps, origin);
    if (typeof inputs === 'string') return stop(inputs);
    const baseline = origin.mode === 'recorded' && turn.agentRevision !== origin.agentRevision ? this.baseline(agent, turn.agentRevision, baselines) : undefined;
    const source = new TurnReplaySource(turn, origin, toolCallHasSideEffects, baseline);
    try {
      for (const input of inputs) await this.inputs.replayInput(agent.key, key, input, ctx, source);
    } catch (e) {
      // The input itself was refused by the revision (a skill it no longer has): nothing of the turn was stored.
      if (!(e instanceof DomainError) || e instanceof ReplayDiverged || e.kind !== 'invalid') throw e;
      await this.recordDivergence(agent, key, turn, { kind: 'not_replayable', detail: `the revision refuses the input: ${e.message}`, model_call: 0 }, ctx);
      return true;
    }
    const divergence = source.divergence ?? source.leftover();
    if (!divergence) return false;
    await this.recordDivergence(agent, key, turn, divergence, ctx);
    return origin.mode === 'recorded';
  }

  /**
   * The input that starts the turn again: the recorded message (entering the step it entered, when the revision has
   * it), or the recorded client tool outputs, sent to the replay's calls with the same tool call ids. A string says
   * why there is none.
   */
  private async inputsOf(agent: ActiveAgent, key: string, turn: RecordedTurn, steps: Readonly<Record<string, unknown>>, origin: ReplayOrigin): Promise<InputRequest[] | string> {
    const t = turn.trigger;
    if (t.kind === 'message') return [{ type: 'input_message', messages: t.messages, ...(t.externalId ? { external_id: t.externalId } : {}), ...(t.behavior ? { behavior: t.behavior } : {}), ...(Object.hasOwn(steps, t.step) ? { entry_step: t.step } : {}) }];
    if (t.kind === 'approval') {
      if (origin.mode !== 'recorded') return 'it resumed on approval decisions, which only a recorded replay asks for again';
      const { session } = await this.sessions.active(agent.key, key);
      const missing = t.decisions.find((d) => !session.approvals.some((a) => a.toolCallId === d.toolCallId && !a.decision));
      if (missing) return `the replay does not wait for the approval of call "${missing.toolCallId}" the original's decision answers`;
      // The recorded decision, by its recorded decider: the replay re-enacts it (the caller may replay the session).
      return t.decisions.map((d) => ({ type: 'tool_approval', tool_call_id: d.toolCallId, decision: d.decision as 'approve' | 'deny', ...(d.arguments ? { arguments: d.arguments } : {}), ...(d.reason ? { reason: d.reason } : {}), decider: { principal: d.decidedBy, agentAdmin: true } }));
    }
    if (t.kind !== 'client_tool_output') return `the turn cannot be replayed: ${t.kind === 'compaction' ? 'it was a compaction asked for by an input' : 'it has no input a replay can send'}`;
    const { session } = await this.sessions.active(agent.key, key);
    const outputs = [];
    for (const o of t.outputs) {
      const call = session.pending.find((p) => p.tool_call_id === o.toolCallId);
      if (!call) return `the replay does not wait for the client tool call "${o.toolCallId}" the original's outputs answer`;
      outputs.push(o.error ? { type: 'error' as const, event_id: call.event_id, error: o.output.error } : { type: 'success' as const, event_id: call.event_id, output: o.output });
    }
    return [{ type: 'tool_output', tool_outputs: outputs }];
  }

  private async recordDivergence(agent: ActiveAgent, key: string, turn: RecordedTurn, d: ReplayDivergence, ctx: CommandContext): Promise<void> {
    const event: SessionEvent = { type: 'SessionReplayDiverged', data: { inputEventId: turn.inputEventId, kind: d.kind, detail: d.detail, modelCall: d.model_call, createdAt: this.clock.now().toISOString() } };
    await this.sessions.store.write(agent.agentId, key, () => [event], ctx);
  }

  /** What the revision that ran the original turn offers the model (the prompt's system part and the tools). */
  private baseline(agent: ActiveAgent, revision: number, cache: Map<number, BaselinePrompt>): BaselinePrompt {
    const known = cache.get(revision);
    if (known) return known;
    let resolved: Promise<ActiveAgent['config']> | undefined;
    const build: BaselinePrompt = async (step, state) => {
      resolved ??= this.revisions.configAt(agent.key, revision, agent.agentId).then(async (c) => this.toolServers.attach(await this.toolConfigs.resolve(c)));
      const config = await resolved;
      const setup = { agent: { ...agent, config, revision } } as unknown as TurnSetup;
      const stepConfig = config.steps[step];
      return { messages: stepConfig ? await this.prompts.prompt(config, step, state, setup) : [], tools: stepConfig ? this.prompts.toolDefinitions(config, stepConfig, state) : [] };
    };
    cache.set(revision, build);
    return build;
  }

  /** The original's history just before an input: its stream up to the log position before the input's. */
  private forkBefore(agent: ActiveAgent, streamId: string, sessionKey: string, own: readonly RecordedEvent[], inputEventId: string): ForkOrigin {
    const input = own.find((e) => (e.data as { eventId?: string }).eventId === inputEventId);
    return { streamId, agentKey: agent.key, sessionKey, upToPosition: (input?.position ?? 1) - 1 };
  }
}


