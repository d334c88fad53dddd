import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { findLlm } from '@lib/llms';
import { Clock, CLOCK, CommandContext, conflict, ID_GENERATOR, IdGenerator, ProcessLiveness, READ_STORE, ReadStore } from '@lib/platform';
import { ToolAttachments, ToolConfigurations } from '@lib/tools';
import type { SessionApiEvent, SessionEvent } from '../../domain/session-events';
import { apiEventView } from '../../domain/session-events';
import { ActiveSession, foldActive } from '../../domain/session';
import { agentRevisionOf } from '../../domain/session-revisions';
import type { ApprovedCall, Stamp } from '../../domain/session-input';
import { decideCloseCrashedTurn, decideStartTurn } from '../../domain/session-turn';
import { ActiveAgent, Sessions } from '../sessions/sessions';
import type { AgentRuns } from '../runs/agent-runs.port';
import { AgentQuotas } from './agent-quotas';
import { AgentIdentities } from '../access/agent-access';
import { TurnRunner } from './turn-runner';
import { compactionPrompts } from './compaction';
import { DEFAULT_CONTEXT_WINDOW } from './turn-parts';
import { LiveTurn, LiveTurns } from './live-turns';
import type { TurnSink } from './turn-sink';
import type { ReplaySource } from './turn-setup';

export const AGENT_LEASES = Symbol('AgentLeases');
/** This process's liveness lease: a running turn is marked with its holder id (docs/agents.md, What a turn commits). */
export const AGENT_LIVENESS = Symbol('AgentLiveness');
/** Whether the agent acting as its identity may read a corpus (filled by the identity of the agent). */
export const AGENT_CORPUS_ACCESS = Symbol('AgentCorpusAccess');
export type AgentCorpusAccess = (agentKey: string, corpusKey: string) => Promise<boolean>;
/** Clear values of an agent's secrets, for `$ref`s in tool arguments. */
export const AGENT_SECRET_VALUES = Symbol('AgentSecretValues');
export type AgentSecretValues = (agentKey: string) => Promise<Record<string, string>>;

/** One turn to run: the session as decided on, the events stored with its start, and where it reports. */
export interface TurnRequest {
  readonly agent: ActiveAgent;
  readonly session: ActiveSession;
  readonly streamId: string;
  readonly revision: number;
  /** Stored in the same append as the turn's start (the input, or the client tool outputs it resumes on). */
  readonly first: SessionEvent[];
  readonly step: string;
  readonly ctx: CommandContext;
  readonly sink: TurnSink;
  readonly streaming: boolean;
  readonly signal?: AbortSignal;
  /** How the turn's tools run other agents (sub_agent). */
  readonly runs: AgentRuns;
  /** A compaction asked for by an input, run as the turn. */
  readonly compaction?: { readonly upTo?: string; readonly message?: string };
  /** Calls a person approved, run first by the resumed turn. */
  readonly approved?: readonly ApprovedCall[];
  /** Who may decide the turn's `session_user` approvals, when it resumes a turn that asked for some. */
  readonly sessionUser?: string;
  /** A replay's turn: where its answers come from (docs/replay.md). */
  readonly replay?: ReplaySource;
}

/** How long a follow-up waits for the running turn before it is refused. */
const FOLLOW_UP_WAIT_MS = 120_000;

/**
 * The turns running in this process, and whether a turn a session shows still runs anywhere. A turn's start is
 * appended at the session's revision (so two processes cannot both start one) and marked with this process's
 * holder id; a turn whose runner died (its process's liveness lease expired) is closed as interrupted by crash.
 */
@Injectable()
export class RunningTurns implements OnApplicationShutdown {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly sessions: Sessions,
    private readonly runner: TurnRunner,
    private readonly quotas: AgentQuotas,
    private readonly toolConfigs: ToolConfigurations,
    private readonly identities: AgentIdentities,
    private readonly toolServers: ToolAttachments,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(AGENT_LIVENESS) private readonly liveness: ProcessLiveness,
    @Inject(AGENT_CORPUS_ACCESS) private readonly corpusAccess: AgentCorpusAccess,
    @Inject(AGENT_SECRET_VALUES) private readonly agentSecrets: AgentSecretValues,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly live: LiveTurns,
  ) {}

  /**
   * A process that stops with no turn running says so at once (its liveness lease released); with turns running,
   * the lease is left to expire and another process closes them as interrupted by crash.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.running.size === 0) await this.liveness.release();
  }

  /** Turns running in this process (for shutdown and tests). */
  get count(): number {
    return this.running.size;
  }

  /** Stops the turn of a session running in this process (an interrupt was stored). */
  abort(streamId: string): void {
    this.running.get(streamId)?.abort.abort();
  }

  /** Runs a turn to its end in this process: its start stored with `first`, then the loop (TurnRunner). */
  async run(request: TurnRequest) {
    const { agent, session, streamId, revision, first, step, ctx, sink, streaming, signal, compaction, approved, sessionUser, replay } = request;
    // A quota already used up refuses the input before anything is stored (429).
    await this.quotas.admit(agent);
    // A compaction whose instructions leave no room in the model's window is refused (422) before anything is stored.
    if (compaction) compactionPrompts(session.compaction ? { ...agent.config, compaction: session.compaction } : agent.config, compaction.message, (await findLlm(this.reads, agent.config.model.name))?.capabilities.context_limit ?? DEFAULT_CONTEXT_WINDOW);
    // One turn per session and process at a time; across processes the start's append at the session's revision
    // decides (a ConcurrencyError makes the input decide again, on a session that now shows the turn).
    if (this.running.has(streamId)) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" or "follow_up"');
    const abort = new AbortController();
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    this.running.set(streamId, { abort, done });
    const stop = () => abort.abort();
    let alive: AbortSignal | undefined;
    let live: LiveTurn | undefined;
    try {
      const turnId = `turn_${this.ids.uuid()}`;
      // What the turn streams is kept while it runs, for a client re-attaching (`GET …/stream`, docs/agents.md).
      live = this.live.open(streamId, turnId, revision);
      const out = live.tee(sink);
      const before = first.reduce((s, e) => foldActive(s, e), session);
      // Held before the start is stored: another process that reads the start finds its holder alive.
      const held = (await this.liveness.lease()).signal;
      alive = held;
      const started = decideStartTurn(before, { turnId, step, holder: this.liveness.holder, agentRevision: agent.revision, now: this.clock.now() });
      const state = started.reduce((s, e) => foldActive(s, e), before);
      const startEvents = [...first, ...started];
      const emitStart = () => {
        for (const [i, e] of first.entries()) if ('eventId' in e.data) out.event(apiEventView(e as SessionApiEvent, session.key, agentRevisionOf(state, e as SessionApiEvent)), String(revision + 1 + i));
        out.reached?.(revision + startEvents.length);
      };
      // A turn whose caller sees nothing before its end (not streamed, no compaction, no approved calls to run first)
      // stores its start while its first model call is on its way: the start's commit no longer waits for the call,
      // nor the call for the commit (issue 43: the overhead of a turn). Only a turn alone in this process: with others
      // running, their appends share commits (group commit) and a start queued a loop turn later misses theirs (50
      // concurrent sessions in the service's process: ~465 turns/s against ~550). Anything else stores it first.
      const overlap = this.running.size === 1 && !streaming && !compaction && !approved?.length;
      let storing: Promise<void> | undefined;
      // A batched turn (a recorded replay's) stores its events with its start, in one append at its end.
      const storeStart = (withEvents: readonly SessionEvent[] = []) =>
        (storing ??= this.sessions.store.append(streamId, revision, [...startEvents, ...withEvents], ctx).then(emitStart, (e: unknown) => {
          abort.abort();
          throw e;
        }));
      if (!overlap) await storeStart();
      // This process's liveness lost (not renewed in time): another process may close the turn as crashed; stop it.
      held.addEventListener('abort', stop, { once: true });
      // An in-process caller's signal (a pipeline record's timeout, a schedule's stall, a parent turn) cancels the
      // turn; what was stored stays. HTTP callers pass none: a turn outlives its caller (issue 43, docs/agents.md).
      let cancelled = false;
      signal?.addEventListener('abort', () => ((cancelled = true), abort.abort()), { once: true });
      const secrets = await this.agentSecrets(agent.key);
      const llm = await findLlm(this.reads, agent.config.model.name);
      // Reusable tool configurations are read at each turn: a change to one applies to every agent using it.
      const resolved = { ...agent, config: await this.toolServers.attach(await this.toolConfigs.resolve(agent.config)) };
      const setup = {
        agent: resolved,
        streamId,
        state,
        revision: revision + startEvents.length,
        ...(overlap ? { storeStart } : {}),
        step,
        refs: { agentSecrets: secrets, agentMetadata: agent.config.metadata, sessionSecrets: this.sessions.openSecrets(session), sessionMetadata: session.fields.metadata },
        canReadCorpus: (corpusKey: string) => this.corpusAccess(agent.key, corpusKey),
        canUseAgent: (agentKey: string) => this.identities.canUseAgent(agent.key, agentKey),
        canWriteCorpus: (corpusKey: string) => this.identities.canWriteCorpus(agent.key, corpusKey),
        runs: request.runs,
        ctx,
        sink: out,
        streaming,
        signal: abort.signal,
        contextWindow: llm?.capabilities.context_limit,
        imageSupport: llm?.capabilities.image_support,
        cancelled: () => cancelled,
        sessionUser: sessionUser ?? replay?.sessionUser ?? session.endUser ?? `${ctx.actor.type}:${ctx.actor.id}`,
        approved,
        replay,
      };
      if (compaction) return await this.runner.runCompaction(setup, turnId, compaction.upTo, compaction.message);
      return await this.runner.run(setup, turnId);
    } finally {
      // The turn's end is stored before the caller is answered, and nothing else needs releasing: a client that
      // sends its next input as soon as it has the answer finds the session free (issue 43). A follow-up waiting
      // on `done` starts its turn at once.
      alive?.removeEventListener('abort', stop);
      if (live) this.live.close(live);
      this.running.delete(streamId);
      finished();
    }
  }
  /**
   * Closes the running turn of a session as interrupted by crash when its runner is dead (turnAlive) (the
   * worker's sweep calls this); true when it did.
   */
  async recoverCrashed(agentKey: string, sessionKey: string): Promise<boolean> {
    const { session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
    if (!session.turn || (await this.turnAlive(session.turn.holder, streamId))) return false;
    const ctx: CommandContext = { actor: { type: 'system', id: 'turn-sweeper' }, requestId: `sweep-${session.turn.turnId}`, commandId: `sweep-${session.turn.turnId}`, now: this.clock.now() };
    await this.closeCrashedTurn(session, streamId, revision, ctx);
    return true;
  }

  async closeCrashedTurn(session: ActiveSession, streamId: string, revision: number, ctx: CommandContext) {
    const events = decideCloseCrashedTurn(session, this.stamp());
    const appended = await this.sessions.store.append(streamId, revision, events, ctx);
    return { session: events.reduce((s, e) => foldActive(s, e), session), revision: appended.nextExpectedRevision };
  }

  /**
   * Whether the turn a session shows can still be running: in this process, when it marked it; elsewhere, while the
   * marking process's liveness lease is held.
   */
  async turnAlive(holder: string, streamId: string): Promise<boolean> {
    if (holder === this.liveness.holder) return this.running.has(streamId);
    return this.liveness.isAlive(holder);
  }

  /** Waits for the session's running turn to end (here or in another process), up to FOLLOW_UP_WAIT_MS. */
  async waitForTurn(agentKey: string, sessionKey: string, streamId: string): Promise<void> {
    const local = this.running.get(streamId);
    if (local) return local.done;
    const deadline = Date.now() + FOLLOW_UP_WAIT_MS;
    while (Date.now() < deadline) {
      // A turn of another process: its end (or its runner's death) shows in the session.
      const { session } = await this.sessions.active(agentKey, sessionKey);
      if (!session.turn || !(await this.turnAlive(session.turn.holder, streamId))) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw conflict('session.turn_running', 'The running turn did not end in time for the follow-up; send it again');
  }

  private stamp(): Stamp {
    return { newEventId: () => `aev_${this.ids.uuid()}`, now: this.clock.now() };
  }
}

