import { Inject, Injectable } from '@nestjs/common';
import { findLlm } from '@lib/llms';
import { Clock, CLOCK, CommandContext, ConcurrencyError, conflict, DomainError, ID_GENERATOR, IdGenerator, invalid, Leases, READ_STORE, ReadStore } from '@lib/platform';
import { applyOverrides, clientOutputProblems, ToolAttachments, ToolConfigurations, USER_TOOLS, UserToolRow } from '@lib/tools';
import type { SessionApiEvent, SessionEvent } from '../../domain/session-events';
import { apiEventView } from '../../domain/session-events';
import { ActiveSession, sessionFold } from '../../domain/session';
import { decideCompactionRequest, decideInputMessage, decideInterrupt, decideToolOutputs, heldInput, pendingCall, Stamp } from '../../domain/session-input';
import { decideCloseCrashedTurn, decideStartTurn } from '../../domain/session-turn';
import { ActiveAgent, Sessions } from '../sessions/sessions';
import { AgentQuotas } from './agent-quotas';
import { AgentIdentities } from '../access/agent-access';
import { TurnRunner } from './turn-runner';
import { LiveTurn, LiveTurns } from './live-turns';
import { NO_SINK, TurnSink } from './turn-sink';

export const AGENT_LEASES = Symbol('AgentLeases');
/** Whether the agent acting as its identity may read a corpus (filled by the identity of the agent). */
export const AGENT_CORPUS_ACCESS = Symbol('AgentCorpusAccess');
export type AgentCorpusAccess = (agentKey: string, corpusKey: string) => Promise<boolean>;
/** Clear values of an agent's secrets, for `$ref`s in tool arguments. */
export const AGENT_SECRET_VALUES = Symbol('AgentSecretValues');
export type AgentSecretValues = (agentKey: string) => Promise<Record<string, string>>;

import type { InputRequest, InputResult } from '../runs/agent-runs.port';
import { SessionAgentRuns } from '../runs/session-agent-runs';
export type { InputRequest, InputResult };

/** One turn to run: the session as decided on, the events stored with its start, and where it reports. */
interface TurnRequest {
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
  /** A compaction asked for by an input, run as the turn. */
  readonly compaction?: { readonly upTo?: string; readonly message?: string };
}

/** How long a follow-up waits for the running turn before it is refused. */
const FOLLOW_UP_WAIT_MS = 120_000;

/**
 * The inputs of a session (`POST …/events`): a message starts a turn in this process under the session's lease;
 * a second message while a turn runs is a 409 unless it steers (picked up at the turn's next model call) or
 * follows up (waits for the turn, then starts its own). A turn whose runner died (its lease expired) is closed
 * as interrupted by crash before anything else happens.
 */
@Injectable()
export class SessionInputs {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly sessions: Sessions,
    private readonly runner: TurnRunner,
    private readonly quotas: AgentQuotas,
    private readonly toolConfigs: ToolConfigurations,
    private readonly identities: AgentIdentities,
    private readonly toolServers: ToolAttachments,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(AGENT_LEASES) private readonly leases: Leases,
    @Inject(AGENT_CORPUS_ACCESS) private readonly corpusAccess: AgentCorpusAccess,
    @Inject(AGENT_SECRET_VALUES) private readonly agentSecrets: AgentSecretValues,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly live: LiveTurns,
  ) {}

  /** Turns running in this process (for shutdown and tests). */
  get runningTurns(): number {
    return this.running.size;
  }

  async input(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink = NO_SINK, streaming = false, signal?: AbortSignal): Promise<InputResult> {
    const collected: Record<string, unknown>[] = [];
    const tee: TurnSink = { ...sink, event: (v, id) => (collected.push(v), sink.event(v, id)) };
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.once(agentKey, sessionKey, req, ctx, tee, streaming, signal);
        if (req.type === 'input_message' && req.since) return { ...result, events: await this.since(agentKey, sessionKey, req.since) };
        return { ...result, events: collected };
      } catch (e) {
        // Another request appended between our read and our append: decide again on the new state.
        if (!(e instanceof ConcurrencyError) || attempt >= 5) throw e;
      }
    }
  }

  private async once(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal): Promise<Omit<InputResult, 'events'>> {
    let { agent, session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
    const ref = { agentKey, sessionKey };
    const duplicate = req.type === 'input_message' ? heldInput(session, ref, req.external_id) : undefined;
    if (duplicate) {
      if (duplicate.held) sink.event(apiEventView(duplicate.held, sessionKey));
      return {};
    }
    if (session.turn && !this.running.has(streamId) && !(await this.leases.holderOf(leaseName(streamId)))) {
      ({ session, revision } = await this.closeCrashedTurn(session, streamId, revision, ctx));
    }
    const turn = { agent, session, streamId, revision, ctx, sink, streaming, signal };
    const firstStep = agent.config.first_step_name;
    switch (req.type) {
      case 'interrupt': {
        const events = decideInterrupt(session, { ...ref, ...this.stamp() });
        await this.sessions.store.append(streamId, revision, events, ctx);
        for (const e of events) sink.event(apiEventView(e as SessionApiEvent, sessionKey));
        this.running.get(streamId)?.abort.abort();
        return {};
      }
      case 'tool_output': {
        const decided = decideToolOutputs(session, { ...ref, ...this.stamp(), outputs: req.tool_outputs, firstStep, schemaProblems: await this.schemaProblems(agent, session, req) });
        if (decided.resume) return this.runTurn({ ...turn, first: decided.events, step: decided.step });
        await this.sessions.store.append(streamId, revision, decided.events, ctx);
        for (const e of decided.events) sink.event(apiEventView(e as SessionApiEvent, session.key));
        return {};
      }
      case 'compact': {
        const { step } = decideCompactionRequest(session, { ...ref, firstStep });
        return this.runTurn({ ...turn, first: [], step, compaction: { upTo: req.compact_up_to_event_id, message: req.compaction_message } });
      }
      case 'input_message':
        break;
    }
    const decided = decideInputMessage(session, { ...ref, ...this.stamp(), messages: req.messages, behavior: req.behavior, entryStep: req.entry_step, externalId: req.external_id, steps: agent.config.steps, firstStep });
    if (decided.kind === 'steer') {
      await this.sessions.store.append(streamId, revision, decided.events, ctx);
      for (const e of decided.events) sink.event(apiEventView(e as SessionApiEvent, sessionKey));
      return {};
    }
    if (decided.kind === 'follow_up') {
      await this.waitForTurn(streamId);
      throw new ConcurrencyError(streamId, revision, revision);
    }
    return this.runTurn({ ...turn, first: decided.events, step: decided.step });
  }

  /**
   * Client tool outputs that do not match the `output_schema` of the client tool registered at /v2/tools for
   * their call (400, nothing stored), by the output's index.
   */
  private async schemaProblems(agent: ActiveAgent, session: ActiveSession, req: Extract<InputRequest, { type: 'tool_output' }>) {
    const found = new Map<number, { toolId: string; problems: string[] }>();
    if (session.turn) return found;
    for (const [i, o] of req.tool_outputs.entries()) {
      const call = pendingCall(session, o.event_id);
      if (!call) break;
      const configured = agent.config.tool_configurations[call.tool_configuration_name];
      if (o.type !== 'success' || configured?.type !== 'client' || typeof configured.tool_id !== 'string') continue;
      const registered = await this.reads.get<UserToolRow>(USER_TOOLS, configured.tool_id);
      const problems = registered?.settings.type === 'client' ? clientOutputProblems(registered.settings.output_schema, o.output) : [];
      if (problems.length) {
        found.set(i, { toolId: configured.tool_id, problems });
        break;
      }
    }
    return found;
  }

  private async runTurn(request: TurnRequest) {
    const { agent, session, streamId, revision, first, step, ctx, sink, streaming, signal, compaction } = request;
    // A quota already used up refuses the input before anything is stored (429).
    await this.quotas.admit(agent);
    const lease = await this.leases.tryAcquire(leaseName(streamId));
    if (!lease) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" or "follow_up"');
    const abort = new AbortController();
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    this.running.set(streamId, { abort, done });
    let live: LiveTurn | undefined;
    try {
      const turnId = `turn_${this.ids.uuid()}`;
      // What the turn streams is kept while it runs, for a client re-attaching (`GET …/stream`, docs/agents.md).
      live = this.live.open(streamId, turnId, revision);
      const out = live.tee(sink);
      const before = first.reduce((s, e) => foldActive(s, e), session);
      const started = decideStartTurn(before, { turnId, step, holder: this.leases.holder, agentRevision: agent.revision, now: this.clock.now() });
      const appended = await this.sessions.store.append(streamId, revision, [...first, ...started], ctx);
      const state = started.reduce((s, e) => foldActive(s, e), before);
      const firstRevision = appended.nextExpectedRevision - first.length - started.length + 1;
      for (const [i, e] of first.entries()) if ('eventId' in e.data) out.event(apiEventView(e as SessionApiEvent, session.key), String(firstRevision + i));
      out.reached?.(appended.nextExpectedRevision);
      const stop = () => abort.abort();
      lease.signal.addEventListener('abort', stop, { once: true });
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
        revision: appended.nextExpectedRevision,
        step,
        refs: { agentSecrets: secrets, agentMetadata: agent.config.metadata, sessionSecrets: this.sessions.openSecrets(session), sessionMetadata: session.fields.metadata },
        canReadCorpus: (corpusKey: string) => this.corpusAccess(agent.key, corpusKey),
        canUseAgent: (agentKey: string) => this.identities.canUseAgent(agent.key, agentKey),
        canWriteCorpus: (corpusKey: string) => this.identities.canWriteCorpus(agent.key, corpusKey),
        runs: new SessionAgentRuns(this.sessions, this),
        ctx,
        sink: out,
        streaming,
        signal: abort.signal,
        contextWindow: llm?.capabilities.context_limit,
        imageSupport: llm?.capabilities.image_support,
        cancelled: () => cancelled,
      };
      if (compaction) return await this.runner.runCompaction(setup, turnId, compaction.upTo, compaction.message);
      return await this.runner.run(setup, turnId);
    } finally {
      // Released before the caller is answered (issue 43, the false "turn already running"): a client that sends
      // its next input as soon as it has the answer finds the session free. A follow-up woken by `done` takes the
      // lease at once. A release that fails leaves the lease to expire (the next input waits for its TTL).
      await lease.release().catch(() => undefined);
      if (live) this.live.close(live);
      this.running.delete(streamId);
      finished();
    }
  }

  /**
   * Closes the running turn of a session as interrupted by crash when nobody holds its lease any more (the
   * worker's sweep calls this); true when it did.
   */
  async recoverCrashed(agentKey: string, sessionKey: string): Promise<boolean> {
    const { session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
    if (!session.turn || this.running.has(streamId) || (await this.leases.holderOf(leaseName(streamId)))) return false;
    const ctx: CommandContext = { actor: { type: 'system', id: 'turn-sweeper' }, requestId: `sweep-${session.turn.turnId}`, commandId: `sweep-${session.turn.turnId}`, now: this.clock.now() };
    await this.closeCrashedTurn(session, streamId, revision, ctx);
    return true;
  }

  private async closeCrashedTurn(session: ActiveSession, streamId: string, revision: number, ctx: CommandContext) {
    const events = decideCloseCrashedTurn(session, this.stamp());
    const appended = await this.sessions.store.append(streamId, revision, events, ctx);
    return { session: events.reduce((s, e) => foldActive(s, e), session), revision: appended.nextExpectedRevision };
  }

  private async waitForTurn(streamId: string): Promise<void> {
    const local = this.running.get(streamId);
    if (local) return local.done;
    const deadline = Date.now() + FOLLOW_UP_WAIT_MS;
    while (Date.now() < deadline) {
      if (!(await this.leases.holderOf(leaseName(streamId)))) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw conflict('session.turn_running', 'The running turn did not end in time for the follow-up; send it again');
  }

  /**
   * The client tool calls the session waits for, with their arguments as the tool gets them, except that a secret
   * is given as its `{"$ref": "agent.secrets.<name>"}`: the client resolves it from its own store. Agent users
   * may not read an agent's secrets (`/v2/agents/{key}/secrets` is for administrators), so they are never sent here.
   */
  async outstanding(agentKey: string, sessionKey: string): Promise<Record<string, unknown>[]> {
    const { agent, session } = await this.sessions.active(agentKey, sessionKey);
    if (!session.pending.length) return [];
    const refs = { agentSecrets: await this.agentSecrets(agentKey), sessionSecrets: this.sessions.openSecrets(session), sessionMetadata: session.fields.metadata };
    return session.pending.map((p) => {
      const called = session.events.find((e) => e.type === 'SessionToolCalled' && e.data.toolCallId === p.tool_call_id);
      let args: Record<string, unknown> = p.arguments;
      if (called?.type === 'SessionToolCalled') {
        try {
          args = applyOverrides(JSON.parse(called.data.arguments) as Record<string, unknown>, agent.config.tool_configurations[p.tool_configuration_name]?.argument_override, refs).referenced;
        } catch {
          args = p.arguments;
        }
      }
      return { event_id: p.event_id, tool_configuration_name: p.tool_configuration_name, tool_name: p.tool_name, arguments: args };
    });
  }

  /** All events after `since` (`start`: from the beginning), for a caller that queued input. */
  private async since(agentKey: string, sessionKey: string, since: string): Promise<Record<string, unknown>[]> {
    const { session } = await this.sessions.active(agentKey, sessionKey);
    const at = since === 'start' ? -1 : session.events.findIndex((e) => e.data.eventId === since);
    if (since !== 'start' && at < 0) throw invalid('session.unknown_event', `since "${since}" is not an event of this session`, { since: 'not an event of the session' });
    return session.events.slice(at + 1).filter((e) => !session.hidden.has(e.data.eventId)).map((e) => apiEventView(e, sessionKey));
  }

  /** An API event's id (drawn only when a decision makes one) and the time, for the session's deciders. */
  private stamp(): Stamp {
    return { newEventId: () => `aev_${this.ids.uuid()}`, now: this.clock.now() };
  }
}

export const leaseName = (sessionStreamId: string): string => sessionStreamId;

function foldActive(s: ActiveSession, e: SessionEvent): ActiveSession {
  const next = sessionFold.evolve(s, e);
  return next.status === 'active' ? next : s;
}
