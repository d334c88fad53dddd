import { Inject, Injectable, Logger } from '@nestjs/common';
import { ChatCompletions } from '@lib/llms';
import { Clock, CLOCK, DomainError, ID_GENERATOR, IdGenerator, SpanHandle } from '@lib/platform';
import type { ToolDefinition } from '@lib/tools';
import type { AgentConfig, StepConfig } from '../../domain/agent-config';
import { effectiveCompaction } from '../../domain/agent-config';
import type { PromptMessage } from '../../domain/history';
import type { SessionEvent } from '../../domain/session-events';
import type { ActiveSession } from '../../domain/session';
import { decideEndTurn, decideStopInterrupt } from '../../domain/session-turn';
import { compileCondition } from '../conditions';
import { GuardrailChecks } from '../guardrails/guardrail-checks';
import { OutputGuard } from '../guardrails/output-guard';
import { GUARDRAIL_INPUT_REFUSAL } from '../../domain/guardrails';
import { inputBlockedBy } from '../../domain/guardrail-input';
import { SessionStore } from '../sessions/session-store';
import { AgentQuotas } from './agent-quotas';
import { eventsToCompact, overflowMessage, summarise } from './compaction';
import { callModel, ModelAnswer, ModelCallOptions } from './model-call';
import { PromptBuilder } from './prompt-builder';
import { ToolRound } from './tool-round';
import { DEFAULT_CONTEXT_WINDOW, estimateTokens, latestToolOutputs, structuredProblem, templateContext } from './turn-parts';
import type { TurnOutcome, TurnSetup } from './turn-setup';
import { TurnState } from './turn-state';
import { chatSpan, invokeAgentSpan } from './turn-spans';

export type { TurnOutcome, TurnSetup } from './turn-setup';
export { estimateTokens } from './turn-parts';

/** Step transitions one turn may make (the reference's example message says 10). */
export const MAX_STEP_TRANSITIONS = 10;
/** Model calls one turn may make: a model that keeps calling tools is stopped here. */
export const MAX_MODEL_CALLS = 50;
/** Attempts at a structured answer that matches its schema before the failure is reported. */
const STRUCTURED_ATTEMPTS = 3;

/**
 * Runs one turn of the agent loop on a session whose `SessionTurnStarted` is already stored: model call,
 * tool calls (concurrently), structured output, step transitions, limits, interrupts and steering. Every
 * event is appended as it happens; the session's state is the fold of what was appended.
 */
@Injectable()
export class TurnRunner {
  private readonly log = new Logger('agent-turn');
  /** Numbers model calls, so each call's usage event has an id of its own. */
  private calls = 0;

  constructor(
    private readonly store: SessionStore,
    private readonly chat: ChatCompletions,
    private readonly prompts: PromptBuilder,
    private readonly toolRound: ToolRound,
    private readonly quotas: AgentQuotas,
    private readonly guardrails: GuardrailChecks,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  run(setup: TurnSetup, turnId: string): Promise<{ outcome: TurnOutcome; error?: DomainError }> {
    return invokeAgentSpan(setup, turnId, (span) => this.runTurn(setup, turnId, span));
  }

  private async runTurn(setup: TurnSetup, turnId: string, span: SpanHandle): Promise<{ outcome: TurnOutcome; error?: DomainError }> {
    const turn = new TurnState(this.store, setup, this.clock, () => `aev_${this.ids.uuid()}`);
    // The compaction settings the session was created with (the reference's effective_compaction).
    const config = setup.state.compaction ? { ...setup.agent.config, compaction: setup.state.compaction } : setup.agent.config;
    let step = setup.step;
    let transitions = 0;
    let outcome: TurnOutcome = 'answered';
    let failure: DomainError | undefined;
    let final: Extract<SessionEvent, { type: 'SessionAgentOutput' | 'SessionStructuredOutput' }> | undefined;
    const outputGuard = OutputGuard.of(this.guardrails, config, setup, turn, turnId);
    try {
      if (setup.approved?.length) await this.toolRound.runApproved(config, step, setup.approved, turn, turnId, setup);
      for (let calls = 0; ; calls++) {
        await turn.catchUp();
        if (turn.state.interruptRequested || setup.signal.aborted) {
          outcome = 'interrupted';
          break;
        }
        if (calls >= MAX_MODEL_CALLS) {
          await turn.record({ type: 'SessionLimitExceeded', data: { ...turn.base(turnId), limit: 'context', message: `The turn made ${MAX_MODEL_CALLS} model calls without an answer; stopped`, value: MAX_MODEL_CALLS } });
          outcome = 'limit';
          break;
        }
        const stepConfig = config.steps[step];
        const inputsSeen = turn.inputCount();
        // An input guardrail blocked the input: the refusal is the answer, and the model never sees the input.
        if (calls === 0 && inputBlockedBy(turn.state.events)) {
          if (setup.streaming) setup.sink.delta(GUARDRAIL_INPUT_REFUSAL);
          final = { type: 'SessionAgentOutput', data: { ...turn.base(turnId), content: GUARDRAIL_INPUT_REFUSAL, step, inputsSeen } };
          break;
        }
        let messages = await this.prompts.prompt(config, step, turn.state, setup);
        const window = setup.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
        const compaction = effectiveCompaction(config);
        if (compaction.enabled && estimateTokens(messages) >= (window * compaction.threshold_percent) / 100) {
          if (await this.compact(turn, turnId, setup, undefined, undefined, estimateTokens(messages.filter((m) => m.role === 'system')))) messages = await this.prompts.prompt(config, step, turn.state, setup);
        }
        const estimate = estimateTokens(messages);
        turn.promptTokens = estimate;
        if (estimate > window) {
          await turn.record({ type: 'SessionLimitExceeded', data: { ...turn.base(turnId), limit: 'context', message: overflowMessage(messages, window, config), value: window, actual: estimate } });
          outcome = 'limit';
          break;
        }
        const tools = this.prompts.toolDefinitions(config, stepConfig, turn.state);
        const structured = stepConfig.output_parser.type === 'structured';
        const guard = structured ? undefined : outputGuard;
        let answer = await turn.afterStart(this.answer(config, stepConfig, messages, tools, setup, turn, step, guard));
        turn.inputsSeen = inputsSeen;
        turn.addUsage(answer.usage);
        setup.sink.contextConsumed({ ...turn.usage, model_context_window: window });
        if (answer.toolCalls.length) {
          guard?.discard();
          setup.sink.deltaEnd(undefined);
          const { pending, approvals } = await this.toolRound.run(config, step, answer, turn, turnId, setup);
          if (pending.length) await turn.record({ type: 'SessionClientToolPending', data: { ...turn.base(turnId), pendingCalls: pending } });
          if (pending.length || approvals) {
            outcome = approvals ? 'approval' : 'client_tool';
            break;
          }
          continue;
        }
        if (guard) answer = await guard.settle(answer, (reason, withheld) => this.regenerate(setup, turn, messages, reason, withheld));
        // The answer is stored with what follows it (the turn's end, a transition) in one append where it can be.
        const output = await this.outputOf(stepConfig, step, answer, messages, turn, turnId, setup);
        const outputId = output.event.data.eventId;
        if (output.error) {
          await turn.record(output.event);
          setup.sink.deltaEnd(outputId);
          failure = output.error;
          outcome = 'failed';
          break;
        }
        await turn.catchUp();
        // A steer that arrived while the model answered is answered before the turn ends.
        if (turn.inputCount() > inputsSeen && !turn.state.interruptRequested) {
          await turn.record(output.event);
          setup.sink.deltaEnd(outputId);
          continue;
        }
        const next = this.nextStep(config, stepConfig, turn.state, setup, output.value);
        if (!next) {
          final = output.event;
          break;
        }
        if (++transitions > MAX_STEP_TRANSITIONS) {
          await turn.recordMany([output.event, { type: 'SessionLimitExceeded', data: { ...turn.base(turnId), limit: 'step_transition', message: `Agent exceeded maximum step transitions (${MAX_STEP_TRANSITIONS}). Possible infinite loop in next_steps`, value: MAX_STEP_TRANSITIONS } }]);
          setup.sink.deltaEnd(outputId);
          outcome = 'limit';
          break;
        }
        await turn.recordMany([output.event, { type: 'SessionStepTransitioned', data: { ...turn.base(turnId), fromStep: step, toStep: next, content: typeof output.value === 'string' ? output.value : JSON.stringify(output.value) } }]);
        setup.sink.deltaEnd(outputId);
        step = next;
      }
    } catch (e) {
      // The session moved before the turn's start was stored: there is no turn to end; the input decides again.
      if (turn.startRefused) throw e;
      if (setup.signal.aborted || turn.state.interruptRequested) outcome = 'interrupted';
      else {
        outcome = 'failed';
        failure = e instanceof DomainError ? e : new DomainError('internal', 'agent.turn_failed', 'The turn failed unexpectedly');
        if (!(e instanceof DomainError)) this.log.error(`turn ${turnId} failed: ${(e as Error).stack ?? String(e)}`);
      }
    }
    // The interrupt that stopped the turn was stored by its request; an abort for another reason is recorded here.
    if (outcome === 'interrupted') await turn.catchUp().catch(() => undefined);
    const stop = decideStopInterrupt(turn.state, { turnId, outcome, interruptRecorded: turn.interruptRecorded(), cancelled: setup.cancelled?.() ?? false, newEventId: turn.newEventId, now: this.clock.now() });
    if (stop.length) await turn.recordMany(stop).catch(() => undefined);
    await turn.recordMany(decideEndTurn(turn.state, { turnId, outcome, usage: turn.usage, error: failure?.message, step, steps: config.steps, final, now: this.clock.now() }));
    if (final) setup.sink.deltaEnd(final.data.eventId);
    span.set({ 'gen_ai.usage.input_tokens': turn.usage.input_tokens, 'gen_ai.usage.output_tokens': turn.usage.output_tokens, 'agent.turn.outcome': outcome });
    if (outcome === 'failed' || outcome === 'limit') span.fail(failure?.message ?? `the turn hit a ${outcome}`);
    return { outcome, ...(failure ? { error: failure } : {}) };
  }

  /**
   * Replaces the history before the last `keep_recent_inputs` inputs (or up to an event), less its pinned events,
   * with a summary made by the agent's model in pieces that fit its window: `compaction_started`, then `compaction`
   * (with every call it made); the compacted events are hidden. False when there was nothing to compact.
   */
  async compact(turn: TurnState, turnId: string, setup: TurnSetup, upToEventId?: string, message?: string, systemTokens = 0): Promise<boolean> {
    const config = turn.state.compaction ? { ...setup.agent.config, compaction: turn.state.compaction } : setup.agent.config;
    const { events, pinned } = eventsToCompact(turn.state, config, upToEventId, turnId);
    if (!events.length) return false;
    const started = turn.base(turnId);
    await turn.record({ type: 'SessionCompactionStarted', data: started }, { emit: false });
    setup.sink.compactionStarted({ type: 'compaction_started', id: started.eventId, session_key: turn.state.key, created_at: started.createdAt });
    const window = setup.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    const { summary, usage, turns, pieces } = await summarise((o) => this.model(setup, { ...o, usage: turn }), config, turn.state, events, message, turn.signal, window, systemTokens);
    turn.addUsage(usage);
    const compacted = { turnsCompacted: turns, eventsCompacted: events.length, summaryText: summary, summaryKey: `summary_${started.eventId.slice(4)}`, compactedEventIds: events.map((e) => e.data.eventId) };
    await turn.record({ type: 'SessionCompacted', data: { ...turn.base(turnId), ...compacted, pieces, usage, ...(pinned.length ? { pinnedEventIds: pinned } : {}) } });
    return true;
  }

  /** A compaction asked for by an input (`type: compact`), as a turn of its own. */
  async runCompaction(setup: TurnSetup, turnId: string, upToEventId?: string, message?: string): Promise<{ outcome: TurnOutcome; error?: DomainError }> {
    const turn = new TurnState(this.store, setup, this.clock, () => `aev_${this.ids.uuid()}`);
    let outcome: TurnOutcome = 'answered';
    let failure: DomainError | undefined;
    try {
      // The summary is held to what the step's system prompt (instructions, memory, skills) leaves in the window.
      const system = (await this.prompts.prompt(setup.agent.config, setup.step, turn.state, setup).catch(() => [])).filter((m) => m.role === 'system');
      await this.compact(turn, turnId, setup, upToEventId, message, estimateTokens(system));
    } catch (e) {
      outcome = 'failed';
      failure = e instanceof DomainError ? e : new DomainError('internal', 'agent.compaction_failed', 'The compaction failed unexpectedly');
    }
    await turn.recordMany(decideEndTurn(turn.state, { turnId, outcome, usage: turn.usage, error: failure?.message, step: setup.step, steps: setup.agent.config.steps, compaction: true, now: this.clock.now() }), { emit: false });
    if (failure) throw failure;
    return { outcome };
  }

  /** One model call, admitted and counted by the agent's `llm_quota`; a replay's recorded answer instead when it has one. */
  private async model(setup: TurnSetup, options: ModelCallOptions, at?: { step: string; state: ActiveSession }): Promise<ModelAnswer> {
    const recorded = setup.replay && (await setup.replay.answer({ step: at?.step ?? '', messages: options.messages, tools: options.tools, state: at?.state ?? setup.state }));
    if (recorded) return recorded;
    await this.quotas.admit(setup.agent);
    const answer = await chatSpan(setup.agent.config.model.name, () => callModel(this.chat, setup.agent.config.model, options, setup.ctx));
    await this.quotas.record(setup.agent, answer.usage, setup.ctx, `call${++this.calls}`, options.usage);
    return answer;
  }

  /** A `regenerate` guardrail's one more call: the withheld answer and the reason, no tools (docs/agents.md, Guardrails). */
  private async regenerate(setup: TurnSetup, turn: TurnState, messages: PromptMessage[], reason: string, withheld: string): Promise<ModelAnswer> {
    const retry: PromptMessage[] = [...messages, { role: 'assistant', content: withheld }, { role: 'user', content: `Your answer was withheld by a guardrail: ${reason}. Answer again so that it holds.` }];
    const answer = await this.model(setup, { messages: retry, tools: [], signal: turn.signal, usage: turn });
    turn.addUsage(answer.usage);
    return answer;
  }

  private answer(config: AgentConfig, step: StepConfig, messages: PromptMessage[], tools: ToolDefinition[], setup: TurnSetup, turn: TurnState, stepName: string, guard?: OutputGuard): Promise<ModelAnswer> {
    const structured = step.output_parser.type === 'structured' ? step.output_parser.json_schema : undefined;
    return this.model(setup, {
      messages,
      tools,
      ...(structured ? { responseFormat: { type: 'json_schema', json_schema: { name: structured.name, schema: structured.schema, strict: structured.strict ?? undefined } } } : {}),
      // A structured answer is delivered whole, never in pieces (the reference).
      // With output guardrails the pieces go to the guard, which releases them once checked.
      ...(setup.streaming && !structured ? { onDelta: guard ? (t: string) => guard.delta(t) : (t: string) => setup.sink.delta(t) } : {}),
      signal: turn.signal,
      usage: turn,
    }, { step: stepName, state: turn.state });
  }

  /** The answer as an event: structured (validated against its schema, asked again when it does not match) or text. */
  private async outputOf(step: StepConfig, stepName: string, answer: ModelAnswer, messages: PromptMessage[], turn: TurnState, turnId: string, setup: TurnSetup): Promise<{ event: Extract<SessionEvent, { type: 'SessionAgentOutput' | 'SessionStructuredOutput' }>; value: unknown; error?: DomainError }> {
    if (step.output_parser.type !== 'structured') {
      return { event: { type: 'SessionAgentOutput', data: { ...turn.base(turnId), content: answer.content, step: stepName, inputsSeen: turn.inputsSeen, usage: answer.usage } }, value: answer.content };
    }
    const schema = step.output_parser.json_schema;
    let current = answer;
    // The tokens of every attempt behind the output (a structured answer asked again counts each call).
    let usage = answer.usage;
    let problem = '';
    for (let attempt = 1; ; attempt++) {
      problem = structuredProblem(current.content, schema.schema);
      if (!problem) {
        const value: unknown = JSON.parse(current.content);
        return { event: { type: 'SessionStructuredOutput', data: { ...turn.base(turnId), schemaName: schema.name, content: value, step: stepName, inputsSeen: turn.inputsSeen, usage } }, value };
      }
      if (attempt >= STRUCTURED_ATTEMPTS) break;
      const retry: PromptMessage[] = [...messages, { role: 'assistant', content: current.content }, { role: 'user', content: `Your answer does not match the JSON schema ${schema.name}: ${problem}. Answer again with JSON only.` }];
      current = await this.model(setup, { messages: retry, tools: [], signal: turn.signal, usage: turn });
      turn.addUsage(current.usage);
      usage = { input_tokens: usage.input_tokens + current.usage.input_tokens, output_tokens: usage.output_tokens + current.usage.output_tokens };
    }
    // Nothing is lost: the last answer is kept as text, and the turn reports why it is not structured.
    return {
      event: { type: 'SessionAgentOutput', data: { ...turn.base(turnId), content: current.content, step: stepName, inputsSeen: turn.inputsSeen, usage } },
      value: current.content,
      error: new DomainError('unprocessable', 'agent.structured_output_invalid', `The model's answer did not match the output schema ${schema.name} after ${STRUCTURED_ATTEMPTS} attempts: ${problem}`),
    };
  }

  /** The first `next_steps` entry whose condition holds (one without a condition always does). */
  private nextStep(config: AgentConfig, step: StepConfig, state: ActiveSession, setup: TurnSetup, output: unknown): string | undefined {
    if (!step.next_steps.length) return undefined;
    const context = { ...templateContext(config, setup.agent.key, state, this.clock.now()), tools: latestToolOutputs(state), output: typeof output === 'string' ? { text: output } : output };
    for (const [i, next] of step.next_steps.entries()) {
      if (next.condition === undefined) return next.step_name;
      try {
        if (compileCondition(next.condition, `next_steps[${i}].condition`)(context) === true) return next.step_name;
      } catch (e) {
        this.log.warn(`next_steps[${i}] condition failed: ${(e as Error).message}`);
      }
    }
    return undefined;
  }
}
