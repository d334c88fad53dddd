import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK, CommandContext, ConcurrencyError, DomainError, ID_GENERATOR, IdGenerator, invalid, READ_STORE, ReadStore } from '@lib/platform';
import { applyOverrides, clientOutputProblems, USER_TOOLS, UserToolRow } from '@lib/tools';
import type { SessionApiEvent } from '../../domain/session-events';
import { apiEventView } from '../../domain/session-events';
import { type ActiveSession, foldActive } from '../../domain/session';
import { agentRevisionOf } from '../../domain/session-revisions';
import { decideApprovalExpiry, decideCompactionRequest, decideInputMessage, decideInterrupt, decideToolApproval, decideToolOutputs, heldInput, pendingCall, ResumeDecision, Stamp } from '../../domain/session-input';
import { ActiveAgent, Sessions } from '../sessions/sessions';
import { ApprovalArguments, pendingApprovalViews } from './approval-arguments';
import { GuardrailChecks } from '../guardrails/guardrail-checks';
import { GuardedInput, guardInput, inputGuardrailEvents } from '../guardrails/input-guard';
import { AGENT_SECRET_VALUES, AgentSecretValues, RunningTurns, TurnRequest } from './running-turns';
import { NO_SINK, TurnSink } from './turn-sink';
import type { ReplaySource } from './turn-setup';
import type { InputRequest, InputResult } from '../runs/agent-runs.port';
import { SessionAgentRuns } from '../runs/session-agent-runs';
export type { InputRequest, InputResult };
export { AGENT_CORPUS_ACCESS, AGENT_LEASES, AGENT_LIVENESS, AGENT_SECRET_VALUES } from './running-turns';
export type { AgentCorpusAccess, AgentSecretValues } from './running-turns';

/**
 * The inputs of a session (`POST …/events`): a message starts a turn in this process, its start appended at the
 * session's revision (so two processes cannot both start one) and marked with this process's holder id; a second
 * message while a turn runs is a 409 unless it steers (picked up at the turn's next model call) or follows up
 * (waits for the turn, then starts its own). A turn whose runner died (its process's liveness lease expired) is
 * closed as interrupted by crash before anything else happens.
 */
@Injectable()
export class SessionInputs {
  /** The last follow-up of each session in this process: follow-ups are taken one at a time, in arrival order. */
  private readonly followUps = new Map<string, Promise<void>>();

  constructor(
    private readonly sessions: Sessions,
    private readonly turns: RunningTurns,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(AGENT_SECRET_VALUES) private readonly agentSecrets: AgentSecretValues,
    private readonly approvalArguments: ApprovalArguments,
    private readonly guardrails: GuardrailChecks,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async input(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink = NO_SINK, streaming = false, signal?: AbortSignal): Promise<InputResult> {
    if (req.type === 'input_message' && req.behavior === 'follow_up') return this.followUp(agentKey, sessionKey, req, ctx, sink, streaming, signal);
    return this.decideAndRun(agentKey, sessionKey, req, ctx, sink, streaming, signal);
  }

  /** A replay's input (docs/replay.md): run as any input, its turn answered by `replay` where it has answers. */
  replayInput(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, replay: ReplaySource): Promise<InputResult> {
    return this.decideAndRun(agentKey, sessionKey, req, ctx, NO_SINK, false, undefined, replay);
  }

  /**
   * Follow-ups are consumed one at a time (the reference's InputBehavior): each waits for the follow-ups that
   * arrived before it in this process to have had their turn, then for the running turn, then runs its own.
   * Across processes the order is the order in which their starts reach the log.
   */
  private async followUp(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal): Promise<InputResult> {
    const key = `${agentKey}\u0000${sessionKey}`;
    const before = this.followUps.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.followUps.set(key, tail);
    try {
      await before;
      return await this.decideAndRun(agentKey, sessionKey, req, ctx, sink, streaming, signal);
    } finally {
      release();
      if (this.followUps.get(key) === tail) this.followUps.delete(key);
    }
  }

  private async decideAndRun(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal, replay?: ReplaySource): Promise<InputResult> {
    const collected: Record<string, unknown>[] = [];
    const tee: TurnSink = { ...sink, event: (v, id) => (collected.push(v), sink.event(v, id)) };
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.once(agentKey, sessionKey, req, ctx, tee, streaming, signal, replay);
        if (req.type === 'input_message' && req.since) return { ...result, events: await this.since(agentKey, sessionKey, req.since) };
        return { ...result, events: collected };
      } catch (e) {
        // Another request appended between our read and our append: decide again on the new state.
        if (!(e instanceof ConcurrencyError) || attempt >= 5) throw e;
      }
    }
  }

  private async once(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink: TurnSink, streaming: boolean, signal?: AbortSignal, replay?: ReplaySource): Promise<Omit<InputResult, 'events'>> {
    let { agent, session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
    const ref = { agentKey, sessionKey };
    const duplicate = req.type === 'input_message' ? heldInput(session, ref, req.external_id) : undefined;
    if (duplicate) {
      if (duplicate.held) sink.event(apiEventView(duplicate.held, sessionKey, agentRevisionOf(session, duplicate.held as SessionApiEvent)));
      return {};
    }
    if (session.turn && !(await this.turns.turnAlive(session.turn.holder, streamId))) {
      ({ session, revision } = await this.turns.closeCrashedTurn(session, streamId, revision, ctx));
    }
    const turn = { agent, session, streamId, revision, ctx, sink, streaming, signal, ...(replay ? { replay } : {}) };
    const firstStep = agent.config.first_step_name;
    switch (req.type) {
      case 'interrupt': {
        const events = decideInterrupt(session, { ...ref, ...this.stamp() });
        await this.sessions.store.append(streamId, revision, events, ctx);
        for (const e of events) sink.event(apiEventView(e as SessionApiEvent, sessionKey, session.turn?.agentRevision));
        this.turns.abort(streamId);
        return {};
      }
      case 'tool_output': {
        const decided = decideToolOutputs(session, { ...ref, ...this.stamp(), outputs: req.tool_outputs, firstStep, schemaProblems: await this.schemaProblems(agent, session, req) });
        return this.resume(turn, decided);
      }
      case 'tool_approval': {
        const decider = req.decider ?? { principal: `${ctx.actor.type}:${ctx.actor.id}`, agentAdmin: false };
        const argumentProblems = req.arguments !== undefined && req.decision === 'approve' ? await this.approvalArguments.problems(agent, session, req.tool_call_id, req.arguments) : undefined;
        const decided = decideToolApproval(session, { ...ref, ...this.stamp(), toolCallId: req.tool_call_id, decision: req.decision, arguments: req.arguments, reason: req.reason, decider, argumentProblems, firstStep });
        return this.resume(turn, decided);
      }
      case 'compact': {
        const { step } = decideCompactionRequest(session, { ...ref, firstStep });
        return this.runTurn({ ...turn, first: [], step, compaction: { upTo: req.compact_up_to_event_id, message: req.compaction_message } });
      }
      case 'input_message':
        break;
    }
    const guarded = await this.guardedInput(agent, req, ctx);
    const decided = decideInputMessage(session, { ...ref, ...this.stamp(), messages: guarded.messages, behavior: req.behavior, entryStep: req.entry_step, externalId: req.external_id, steps: agent.config.steps, firstStep, skills: agent.config.skills });
    if (decided.kind !== 'follow_up' && guarded.decisions.length) {
      // A steer joins a turn whose model already runs: a blocked one is refused, nothing stored.
      if (decided.kind === 'steer' && guarded.blocked) throw invalid('session.input_blocked', `The input was blocked by guardrail ${guarded.blocked.guardrail}: ${guarded.blocked.reason}`, { messages: `blocked by guardrail ${guarded.blocked.guardrail}` });
      decided.events.push(...inputGuardrailEvents(guarded.decisions, (decided.events[0].data as { eventId: string }).eventId, this.stamp()));
    }
    if (decided.kind === 'steer') {
      await this.sessions.store.append(streamId, revision, decided.events, ctx);
      for (const e of decided.events) sink.event(apiEventView(e as SessionApiEvent, sessionKey, session.turn?.agentRevision));
      return {};
    }
    if (decided.kind === 'follow_up') {
      await this.turns.waitForTurn(agentKey, sessionKey, streamId);
      throw new ConcurrencyError(streamId, revision, revision);
    }
    return this.runTurn({ ...turn, first: decided.events, step: decided.step });
  }

  /**
   * A decision on what a paused turn waits for: the turn resumes (running the approved calls first) when nothing
   * is waited for any more, else the decision is only stored.
   */
  private async resume(turn: Omit<TurnRequest, 'first' | 'step' | 'runs'>, decided: ResumeDecision): Promise<Omit<InputResult, 'events'>> {
    const sessionUser = turn.session.approvals[0]?.sessionUser;
    if (decided.resume) return this.runTurn({ ...turn, first: decided.events, step: decided.step, approved: decided.run, ...(sessionUser ? { sessionUser } : {}) });
    await this.sessions.store.append(turn.streamId, turn.revision, decided.events, turn.ctx);
    const after = decided.events.reduce((s, e) => foldActive(s, e), turn.session);
    for (const e of decided.events) if ('eventId' in e.data) turn.sink.event(apiEventView(e as SessionApiEvent, turn.session.key, agentRevisionOf(after, e as SessionApiEvent)));
    return {};
  }

  /**
   * The approval's timer fired (the worker wing): a call still undecided is resolved as expired and, when nothing
   * else is waited for, the turn resumes here. Nothing when it was decided meanwhile or the session is gone; a
   * contended append is decided again.
   */
  async expireApproval(agentKey: string, sessionKey: string, toolCallId: string, timerId: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { agent, session, revision, streamId } = await this.sessions.active(agentKey, sessionKey);
        const ctx: CommandContext = { actor: { type: 'system', id: 'approval_timeout' }, requestId: timerId, commandId: timerId, now: this.clock.now() };
        const decided = decideApprovalExpiry(session, { agentKey, sessionKey, ...this.stamp(), toolCallId, firstStep: agent.config.first_step_name });
        if (!decided.events.length) return;
        // A replay that stopped before its recorded decision resumes nothing by itself (its turns are the record's).
        if (session.replayOf) return void (await this.sessions.store.append(streamId, revision, decided.events, ctx));
        try {
          await this.resume({ agent, session, streamId, revision, ctx, sink: NO_SINK, streaming: false }, decided);
        } catch (e) {
          // The turn could not start (its quota used up, a turn already running): the expiry is stored all the same, and
          // the conversation goes on at the next input. A timer fired again would only meet the same refusal.
          if (!(e instanceof DomainError) || e instanceof ConcurrencyError) throw e;
          await this.sessions.store.append(streamId, revision, decided.events, ctx);
        }
        return;
      } catch (e) {
        if (e instanceof DomainError && e.kind === 'not_found') return;
        if (!(e instanceof ConcurrencyError) || attempt >= 5) throw e;
      }
    }
  }

  /** The tool calls the session waits to have approved, as `GET …/pending_approvals` lists them. */
  async pendingApprovals(agentKey: string, sessionKey: string): Promise<Record<string, unknown>[]> {
    return pendingApprovalViews((await this.sessions.active(agentKey, sessionKey)).session);
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

  private runTurn(request: Omit<TurnRequest, 'runs'>) {
    return this.turns.run({ ...request, runs: new SessionAgentRuns(this.sessions, this) });
  }

  /** All events after `since` (`start`: from the beginning), for a caller that queued input. */
  private async since(agentKey: string, sessionKey: string, since: string): Promise<Record<string, unknown>[]> {
    const { session } = await this.sessions.active(agentKey, sessionKey);
    const at = since === 'start' ? -1 : session.events.findIndex((e) => e.data.eventId === since);
    if (since !== 'start' && at < 0) throw invalid('session.unknown_event', `since "${since}" is not an event of this session`, { since: 'not an event of the session' });
    return session.events.slice(at + 1).filter((e) => !session.hidden.has(e.data.eventId)).map((e) => apiEventView(e, sessionKey, agentRevisionOf(session, e as SessionApiEvent)));
  }

  /** The input guardrails, run once per request (a contended append decides again without asking the judge again). */
  private readonly guardedInputs = new WeakMap<InputRequest, Promise<GuardedInput>>();
  private guardedInput(agent: ActiveAgent, req: Extract<InputRequest, { type: 'input_message' }>, ctx: CommandContext): Promise<GuardedInput> {
    let guarded = this.guardedInputs.get(req);
    if (!guarded) this.guardedInputs.set(req, (guarded = guardInput(this.guardrails, agent.config, req.messages, ctx)));
    return guarded;
  }

  /** An API event's id (drawn only when a decision makes one) and the time, for the session's deciders. */
  private stamp(): Stamp {
    return { newEventId: () => `aev_${this.ids.uuid()}`, now: this.clock.now() };
  }
}
