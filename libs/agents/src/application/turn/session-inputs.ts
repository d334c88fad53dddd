import { Inject, Injectable } from '@nestjs/common';
import { findLlm } from '@lib/llms';
import { Clock, CLOCK, CommandContext, ConcurrencyError, conflict, DomainError, ID_GENERATOR, IdGenerator, invalid, Leases, READ_STORE, ReadStore } from '@lib/platform';
import type { SessionApiEvent, SessionEvent } from '../../domain/session-events';
import { apiEventView } from '../../domain/session-events';
import { ActiveSession, entryStepFor, sessionFold } from '../../domain/session';
import { ActiveAgent, Sessions } from '../sessions/sessions';
import { AgentQuotas } from './agent-quotas';
import { AgentIdentities } from '../access/agent-access';
import { ToolServers } from '../tool-servers/tool-servers';
import { ToolConfigurations } from '../tool-configurations/tool-configurations';
import { applyOverrides } from './tools';
import { USER_TOOLS, UserToolRow } from '../../read-models';
import { clientOutputProblems } from '../user-tools/client-output';
import { TurnRunner } from './turn-runner';
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
    private readonly toolServers: ToolServers,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(AGENT_LEASES) private readonly leases: Leases,
    @Inject(AGENT_CORPUS_ACCESS) private readonly corpusAccess: AgentCorpusAccess,
    @Inject(AGENT_SECRET_VALUES) private readonly agentSecrets: AgentSecretValues,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Turns running in this process (for shutdown and tests). */
  get runningTurns(): number {
    return this.running.size;
  }

  async input(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink = NO_SINK, streaming = false, signal?: AbortSignal): Promise<InputResult> {
    const collected: Record<string, unknown>[] = [];
    const tee: TurnSink = { ...sink, event: (v) => (collected.push(v), sink.event(v)) };
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
    if (req.type === 'input_message' && req.external_id && session.externalIds.has(req.external_id)) {
      const held = session.events.find((e) => e.data.eventId === session.externalIds.get(req.external_id!));
      if (held) sink.event(apiEventView(held, sessionKey));
      return {};
    }
    if (session.turn && !this.running.has(streamId) && !(await this.leases.holderOf(leaseName(streamId)))) {
      ({ session, revision } = await this.closeCrashedTurn(agent, session, streamId, revision, ctx));
    }
    const busy = session.turn !== undefined;
    switch (req.type) {
      case 'interrupt': {
        if (!busy) throw conflict('session.not_running', 'No turn is running in this session: there is nothing to interrupt');
        const event: SessionEvent = { type: 'SessionInterrupted', data: { eventId: this.eventId(), turnId: session.turn!.turnId, reason: 'request', createdAt: this.now() } };
        await this.sessions.store.append(streamId, revision, [event], ctx);
        sink.event(apiEventView(event as SessionApiEvent, sessionKey));
        this.running.get(streamId)?.abort.abort();
        return {};
      }
      case 'tool_output':
        if (busy) throw conflict('session.turn_running', 'A turn is running in this session; send tool outputs when it waits for them');
        return this.toolOutputs(agent, session, streamId, revision, req, ctx, sink, streaming, signal);
      case 'compact':
        if (busy) throw conflict('session.turn_running', 'A turn is running in this session; ask for the compaction when it has ended');
        return this.runTurn(agent, session, streamId, revision, [], session.currentStep ?? agent.config.first_step_name, ctx, sink, streaming, signal, { upTo: req.compact_up_to_event_id, message: req.compaction_message });
      case 'input_message':
        break;
    }
    if (busy) {
      if (!req.behavior) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" (joins the running turn) or "follow_up" (runs after it)');
      if (req.behavior === 'steer') {
        const event = this.inputEvent(req, session.turn!.step);
        await this.sessions.store.append(streamId, revision, [event], ctx);
        sink.event(apiEventView(event as SessionApiEvent, sessionKey));
        return {};
      }
      await this.waitForTurn(streamId);
      throw new ConcurrencyError(streamId, revision, revision);
    }
    const step = entryStepFor(session, agent.config.steps, agent.config.first_step_name, req.entry_step);
    const input = this.inputEvent(req, step);
    return this.runTurn(agent, session, streamId, revision, [input], step, ctx, sink, streaming, signal);
  }

  /** Client tool outputs: each answers a pending call; once none is pending the turn continues. */
  private async toolOutputs(agent: ActiveAgent, session: ActiveSession, streamId: string, revision: number, req: Extract<InputRequest, { type: 'tool_output' }>, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal) {
    const events: SessionEvent[] = [];
    for (const [i, o] of req.tool_outputs.entries()) {
      const call = session.pending.find((p) => p.event_id === o.event_id);
      if (!call) throw invalid('session.no_pending_call', `tool_outputs[${i}].event_id "${o.event_id}" is not a client tool call this session waits for`, { [`tool_outputs[${i}].event_id`]: 'not an outstanding client tool call' });
      // A client tool registered at /v2/tools with an output_schema gets outputs that match it (400, nothing stored).
      const configured = agent.config.tool_configurations[call.tool_configuration_name];
      if (o.type === 'success' && configured?.type === 'client' && typeof configured.tool_id === 'string') {
        const registered = await this.reads.get<UserToolRow>(USER_TOOLS, configured.tool_id);
        const problems = registered?.settings.type === 'client' ? clientOutputProblems(registered.settings.output_schema, o.output) : [];
        if (problems.length) throw invalid('session.invalid_tool_output', `tool_outputs[${i}].output does not match the output_schema of ${configured.tool_id}: ${problems.join('; ')}`, { [`tool_outputs[${i}].output`]: problems.join('; ') });
      }
      const output = o.type === 'success' ? o.output : { error: o.error };
      events.push({ type: 'SessionToolReturned', data: { eventId: this.eventId(), createdAt: this.now(), toolCallId: call.tool_call_id, toolConfigurationName: call.tool_configuration_name, toolName: 'client', toolOutput: output, error: o.type === 'error', step: session.currentStep ?? agent.config.first_step_name } });
    }
    const left = session.pending.filter((p) => !req.tool_outputs.some((o) => o.event_id === p.event_id));
    if (left.length) {
      await this.sessions.store.append(streamId, revision, events, ctx);
      for (const e of events) sink.event(apiEventView(e as SessionApiEvent, session.key));
      return {};
    }
    const step = session.currentStep ?? agent.config.first_step_name;
    return this.runTurn(agent, session, streamId, revision, events, step, ctx, sink, streaming, signal);
  }

  private async runTurn(agent: ActiveAgent, session: ActiveSession, streamId: string, revision: number, first: SessionEvent[], step: string, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal, compaction?: { upTo?: string; message?: string }) {
    // A quota already used up refuses the input before anything is stored (429).
    await this.quotas.admit(agent);
    const lease = await this.leases.tryAcquire(leaseName(streamId));
    if (!lease) throw conflict('session.turn_running', 'A turn is already running in this session: send the input with behavior "steer" or "follow_up"');
    const abort = new AbortController();
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    this.running.set(streamId, { abort, done });
    try {
      const turnId = `turn_${this.ids.uuid()}`;
      const started: SessionEvent = { type: 'SessionTurnStarted', data: { turnId, step, holder: this.leases.holder, agentRevision: agent.revision, createdAt: this.now() } };
      const appended = await this.sessions.store.append(streamId, revision, [...first, started], ctx);
      const state = [...first, started].reduce((s, e) => foldActive(s, e), session);
      for (const e of first) if ('eventId' in e.data) sink.event(apiEventView(e as SessionApiEvent, session.key));
      const stop = () => abort.abort();
      lease.signal.addEventListener('abort', stop, { once: true });
      // A streaming caller that goes away cancels the model call; what was stored stays (docs/agents.md).
      let disconnected = false;
      signal?.addEventListener('abort', () => ((disconnected = true), abort.abort()), { once: true });
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
        sink,
        streaming,
        signal: abort.signal,
        contextWindow: llm?.capabilities.context_limit,
        imageSupport: llm?.capabilities.image_support,
        disconnected: () => disconnected,
      };
      if (compaction) return await this.runner.runCompaction(setup, turnId, compaction.upTo, compaction.message);
      return await this.runner.run(setup, turnId);
    } finally {
      // The caller is answered without waiting for the release; a follow-up woken by `done` comes after it and
      // takes the lease at once.
      void lease
        .release()
        .catch(() => undefined)
        .then(() => {
          this.running.delete(streamId);
          finished();
        });
    }
  }

  /**
   * Closes the running turn of a session as interrupted by crash when nobody holds its lease any more (the
   * worker's sweep calls this); true when it did.
   */
  async recoverCrashed(agentKey: string, sessionKey: string): Promise<boolean> {
    const { agent, session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
    if (!session.turn || this.running.has(streamId) || (await this.leases.holderOf(leaseName(streamId)))) return false;
    const ctx: CommandContext = { actor: { type: 'system', id: 'turn-sweeper' }, requestId: `sweep-${session.turn.turnId}`, commandId: `sweep-${session.turn.turnId}`, now: this.clock.now() };
    await this.closeCrashedTurn(agent, session, streamId, revision, ctx);
    return true;
  }

  private async closeCrashedTurn(agent: ActiveAgent, session: ActiveSession, streamId: string, revision: number, ctx: CommandContext) {
    const turnId = session.turn!.turnId;
    const events: SessionEvent[] = [
      { type: 'SessionInterrupted', data: { eventId: this.eventId(), turnId, reason: 'crash', createdAt: this.now() } },
      { type: 'SessionTurnEnded', data: { turnId, outcome: 'interrupted', usage: { input_tokens: 0, output_tokens: 0 }, error: 'the process running the turn stopped', nextStep: session.turn!.step, createdAt: this.now() } },
    ];
    const appended = await this.sessions.store.append(streamId, revision, events, ctx);
    return { session: events.reduce((s, e) => foldActive(s, e), session), revision: appended.nextExpectedRevision, agent };
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

  private inputEvent(req: Extract<InputRequest, { type: 'input_message' }>, step: string): SessionEvent {
    return { type: 'SessionInputReceived', data: { eventId: this.eventId(), createdAt: this.now(), messages: [...req.messages], ...(req.external_id ? { externalId: req.external_id } : {}), ...(req.behavior ? { behavior: req.behavior } : {}), step } };
  }

  private eventId(): string {
    return `aev_${this.ids.uuid()}`;
  }

  private now(): string {
    return this.clock.now().toISOString();
  }
}

export const leaseName = (sessionStreamId: string): string => sessionStreamId;

function foldActive(s: ActiveSession, e: SessionEvent): ActiveSession {
  const next = sessionFold.evolve(s, e);
  return next.status === 'active' ? next : s;
}
