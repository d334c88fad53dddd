// Over 300 lines: the loop, its tool calls, its answers and its compaction are one state machine over one
// TurnState and TurnSetup; split further, every part would take both and the order between them would hide.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ChatCompletions } from '@lib/llms';
import { Clock, CLOCK, DomainError, ID_GENERATOR, IdGenerator } from '@lib/platform';
import type { AgentConfig, GlossaryExpansionReminder, OffloadingConfig, StepConfig, TemplatedReminder, ToolConfig } from '../../domain/agent-config';
import { expandTerms } from '../../domain/glossary';
import { Glossaries } from '../glossaries/glossaries';
import { effectiveCompaction } from '../../domain/agent-config';
import { historyMessages, PromptMessage } from '../../domain/history';
import type { PendingClientCall, SessionEvent } from '../../domain/session-events';
import type { ActiveSession } from '../../domain/session';
import { compileCondition } from '../conditions';
import { InstructionTexts } from '../instruction-texts';
import { SessionStore } from '../sessions/session-store';
import { AgentQuotas } from './agent-quotas';
import { eventsToCompact, summarise } from './compaction';
import { callModel, ModelAnswer, ModelCallOptions } from './model-call';
import { offloadDecision, truncateOutput } from './offload';
import { ArtifactStore } from '../sessions/artifact-store';
import { ToolCaller } from './tool-caller';
import { AGENT_TOOLS, applyOverrides, clientToolDefinition, ToolContext, ToolDefinition, ToolRegistry, UnresolvedRef } from './tools';
import { estimateTokens, latestToolOutputs, renderTemplate, structuredProblem, templateContext } from './turn-parts';
import type { TurnOutcome, TurnSetup } from './turn-setup';
import { TurnState } from './turn-state';

export type { TurnOutcome, TurnSetup } from './turn-setup';
export { estimateTokens } from './turn-parts';

const ARTIFACT_TOOLS = ['artifact_read', 'artifact_grep', 'artifact_jq'];

/** Step transitions one turn may make (the reference's example message says 10). */
export const MAX_STEP_TRANSITIONS = 10;
/** Model calls one turn may make: a model that keeps calling tools is stopped here. */
export const MAX_MODEL_CALLS = 50;
/** Attempts at a structured answer that matches its schema before the failure is reported. */
const STRUCTURED_ATTEMPTS = 3;
/** Context window assumed when the model's registration gives none. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

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
    @Inject(AGENT_TOOLS) private readonly tools: ToolRegistry,
    private readonly caller: ToolCaller,
    private readonly quotas: AgentQuotas,
    private readonly instructions: InstructionTexts,
    private readonly glossaries: Glossaries,
    private readonly artifacts: ArtifactStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(setup: TurnSetup, turnId: string): Promise<{ outcome: TurnOutcome; error?: DomainError }> {
    const turn = new TurnState(this.store, setup, this.clock, () => `aev_${this.ids.uuid()}`);
    // The compaction settings the session was created with (the reference's effective_compaction).
    const config = setup.state.compaction ? { ...setup.agent.config, compaction: setup.state.compaction } : setup.agent.config;
    let step = setup.step;
    let transitions = 0;
    let outcome: TurnOutcome = 'answered';
    let failure: DomainError | undefined;
    let final: Extract<SessionEvent, { type: 'SessionAgentOutput' | 'SessionStructuredOutput' }> | undefined;
    try {
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
        let messages = await this.prompt(config, step, turn.state, setup);
        const window = setup.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
        const compaction = effectiveCompaction(config);
        if (compaction.enabled && estimateTokens(messages) >= (window * compaction.threshold_percent) / 100) {
          if (await this.compact(turn, turnId, setup)) messages = await this.prompt(config, step, turn.state, setup);
        }
        const estimate = estimateTokens(messages);
        turn.promptTokens = estimate;
        if (estimate > window) {
          await turn.record({ type: 'SessionLimitExceeded', data: { ...turn.base(turnId), limit: 'context', message: `The conversation (about ${estimate} tokens) exceeds the model's context window of ${window} tokens; compact the session`, value: window, actual: estimate } });
          outcome = 'limit';
          break;
        }
        const tools = this.toolDefinitions(config, stepConfig);
        const answer = await this.answer(config, stepConfig, messages, tools, setup, turn);
        turn.inputsSeen = inputsSeen;
        turn.addUsage(answer.usage);
        setup.sink.contextConsumed({ ...turn.usage, model_context_window: window });
        if (answer.toolCalls.length) {
          setup.sink.deltaEnd(undefined);
          const pending = await this.runTools(config, step, answer, turn, turnId, setup);
          if (pending.length) {
            await turn.record({ type: 'SessionClientToolPending', data: { ...turn.base(turnId), pendingCalls: pending } });
            outcome = 'client_tool';
            break;
          }
          continue;
        }
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
      if (setup.signal.aborted || turn.state.interruptRequested) outcome = 'interrupted';
      else {
        outcome = 'failed';
        failure = e instanceof DomainError ? e : new DomainError('internal', 'agent.turn_failed', 'The turn failed unexpectedly');
        if (!(e instanceof DomainError)) this.log.error(`turn ${turnId} failed: ${(e as Error).stack ?? String(e)}`);
      }
    }
    // The interrupt that stopped the turn was stored by its request; an abort for another reason is recorded here.
    if (outcome === 'interrupted') await turn.catchUp().catch(() => undefined);
    if (outcome === 'interrupted' && !turn.interruptRecorded()) {
      await turn.record({ type: 'SessionInterrupted', data: { ...turn.base(turnId), reason: setup.disconnected?.() ? 'disconnect' : 'request' } }).catch(() => undefined);
    }
    // A turn waiting for client tools resumes on its step; an ended one re-enters where the step says.
    const nextStep = outcome === 'client_tool' ? step : (config.steps[step]?.reentry_step ?? step);
    const ended: SessionEvent = { type: 'SessionTurnEnded', data: { turnId, outcome, usage: turn.usage, ...(failure ? { error: failure.message } : {}), nextStep, createdAt: this.clock.now().toISOString() } };
    await turn.recordMany(final ? [final, ended] : [ended]);
    if (final) setup.sink.deltaEnd(final.data.eventId);
    return { outcome, ...(failure ? { error: failure } : {}) };
  }

  /**
   * Replaces the history before the last `keep_recent_inputs` inputs (or up to an event) with a summary made by
   * the agent's model: `compaction_started`, then `compaction`; the compacted events are hidden. False when there
   * was nothing to compact.
   */
  async compact(turn: TurnState, turnId: string, setup: TurnSetup, upToEventId?: string, message?: string): Promise<boolean> {
    const config = turn.state.compaction ? { ...setup.agent.config, compaction: turn.state.compaction } : setup.agent.config;
    const events = eventsToCompact(turn.state, config, upToEventId);
    if (!events.length) return false;
    const started = turn.base(turnId);
    await turn.record({ type: 'SessionCompactionStarted', data: started }, { emit: false });
    setup.sink.compactionStarted({ type: 'compaction_started', id: started.eventId, session_key: turn.state.key, created_at: started.createdAt });
    const { summary, usage, turns } = await summarise((o) => this.model(setup, o), config, turn.state, events, message, turn.signal);
    turn.addUsage(usage);
    await turn.record({ type: 'SessionCompacted', data: { ...turn.base(turnId), turnsCompacted: turns, eventsCompacted: events.length, summaryText: summary, summaryKey: `summary_${started.eventId.slice(4)}`, compactedEventIds: events.map((e) => e.data.eventId) } });
    return true;
  }

  /** A compaction asked for by an input (`type: compact`), as a turn of its own. */
  async runCompaction(setup: TurnSetup, turnId: string, upToEventId?: string, message?: string): Promise<{ outcome: TurnOutcome; error?: DomainError }> {
    const turn = new TurnState(this.store, setup, this.clock, () => `aev_${this.ids.uuid()}`);
    let outcome: TurnOutcome = 'answered';
    let failure: DomainError | undefined;
    try {
      await this.compact(turn, turnId, setup, upToEventId, message);
    } catch (e) {
      outcome = 'failed';
      failure = e instanceof DomainError ? e : new DomainError('internal', 'agent.compaction_failed', 'The compaction failed unexpectedly');
    }
    await turn.record({ type: 'SessionTurnEnded', data: { turnId, outcome, usage: turn.usage, ...(failure ? { error: failure.message } : {}), nextStep: setup.step, createdAt: this.clock.now().toISOString() } }, { emit: false });
    if (failure) throw failure;
    return { outcome };
  }

  /** System instructions of the step (inline, or from `/v2/instructions` by reference), then the history. */
  private async prompt(config: AgentConfig, step: string, state: ActiveSession, setup: TurnSetup): Promise<PromptMessage[]> {
    const context = templateContext(config, setup.agent.key, state, this.clock.now());
    const texts = await Promise.all(
      (config.steps[step]?.instructions ?? []).map(async (ins, i) => {
        const field = `steps.${step}.instructions[${i}]`;
        if (ins.type === 'inline') return renderTemplate(ins.template, ins.template_type, context, `${field}.template`);
        const found = await this.instructions.resolve(ins);
        if (!found) throw new DomainError('unprocessable', 'agent.instruction_missing', `${field} refers to instruction ${ins.id}${ins.version ? ` version ${ins.version}` : ''}, which does not exist`);
        return renderTemplate(found.template, found.template_type, context, `${field} (${found.name})`);
      }),
    );
    const instructions = texts.filter(Boolean).join('\n\n');
    const render = (r: TemplatedReminder) => renderTemplate(r.template, r.template_type, context, 'reminder.template');
    const expand = await this.expander(config);
    const images = await this.imagesOf(state);
    return [...(instructions ? [{ role: 'system' as const, content: instructions }] : []), ...historyMessages(state, config.steps, render, expand, (id) => images.get(id))];
  }

  /** The images `image_read` loaded into the session's view, as data URLs (their bytes are in the artifact store). */
  private async imagesOf(state: ActiveSession): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const e of state.events) {
      if (e.type !== 'SessionImageRead' || state.hidden.has(e.data.eventId) || out.has(e.data.artifactId)) continue;
      const artifact = state.artifacts.find((a) => a.artifactId === e.data.artifactId);
      if (!artifact) continue;
      const bytes = await this.artifacts.get(artifact.sha256).catch(() => undefined);
      if (bytes) out.set(e.data.artifactId, `data:${artifact.mimeType};base64,${bytes.toString('base64')}`);
    }
    return out;
  }

  /** The glossaries the steps' `glossary_expansion` reminders name, as one expander per step. */
  private async expander(config: AgentConfig): Promise<(step: string, text: string) => string> {
    const byStep = new Map<string, Map<string, string>>();
    const loaded = new Map<string, Map<string, string>>();
    for (const [name, step] of Object.entries(config.steps)) {
      const keys = step.reminders.filter((r): r is GlossaryExpansionReminder => r.type === 'glossary_expansion').map((r) => r.glossary_key);
      if (!keys.length) continue;
      const merged = new Map<string, string>();
      for (const key of keys) {
        if (!loaded.has(key)) loaded.set(key, await this.glossaries.all(key));
        for (const [t, e] of loaded.get(key)!) merged.set(t, e);
      }
      byStep.set(name, merged);
    }
    return (step, text) => (byStep.has(step) ? expandTerms(text, byStep.get(step)!) : text);
  }

  private toolDefinitions(config: AgentConfig, step: StepConfig): ToolDefinition[] {
    const names = step.allowed_tools ?? Object.keys(config.tool_configurations);
    return names
      .filter((n) => config.tool_configurations[n] && config.tool_configurations[n].enabled !== false)
      .map((n) => {
        const tool = config.tool_configurations[n];
        const runner = this.tools.get(tool.type);
        return runner ? runner.definition(n, tool) : clientToolDefinition(n, tool);
      });
  }

  /** One model call, admitted and counted by the agent's `llm_quota`. */
  private async model(setup: TurnSetup, options: ModelCallOptions): Promise<ModelAnswer> {
    await this.quotas.admit(setup.agent);
    const answer = await callModel(this.chat, setup.agent.config.model, options, setup.ctx);
    await this.quotas.record(setup.agent, answer.usage, setup.ctx, `call${++this.calls}`);
    return answer;
  }

  private answer(config: AgentConfig, step: StepConfig, messages: PromptMessage[], tools: ToolDefinition[], setup: TurnSetup, turn: TurnState): Promise<ModelAnswer> {
    const structured = step.output_parser.type === 'structured' ? step.output_parser.json_schema : undefined;
    return this.model(
      setup,
      {
        messages,
        tools,
        ...(structured ? { responseFormat: { type: 'json_schema', json_schema: { name: structured.name, schema: structured.schema, strict: structured.strict ?? undefined } } } : {}),
        // A structured answer is delivered whole, never in pieces (the reference).
        ...(setup.streaming && !structured ? { onDelta: (t: string) => setup.sink.delta(t) } : {}),
        signal: turn.signal,
      },
    );
  }

  /** Records the calls, runs the service's tools concurrently, and returns the client calls left to the caller. */
  private async runTools(config: AgentConfig, step: string, answer: ModelAnswer, turn: TurnState, turnId: string, setup: TurnSetup): Promise<PendingClientCall[]> {
    const modelCallId = `mc_${this.ids.uuid()}`;
    const planned = answer.toolCalls.map((call) => {
      const tool = config.tool_configurations[call.name];
      let args: Record<string, unknown> = {};
      let problem: string | undefined;
      try {
        const parsed: unknown = call.arguments ? JSON.parse(call.arguments) : {};
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) problem = 'the arguments are not a JSON object';
        else args = parsed as Record<string, unknown>;
      } catch {
        problem = 'the arguments are not valid JSON';
      }
      if (!tool) problem = `there is no tool named ${call.name}`;
      else if (config.steps[step].allowed_tools && !config.steps[step].allowed_tools!.includes(call.name)) problem = `tool ${call.name} is not allowed in step ${step}`;
      let resolved = args;
      let shown = args;
      if (tool && !problem) {
        try {
          ({ resolved, shown } = applyOverrides(args, tool.argument_override, setup.refs));
        } catch (e) {
          if (!(e instanceof UnresolvedRef)) throw e;
          problem = e.message;
        }
      }
      return { call, tool, resolved, shown, problem, eventId: turn.newEventId() };
    });
    await turn.recordMany(
      planned.map((p) => ({
        type: 'SessionToolCalled' as const,
        data: { eventId: p.eventId, turnId, createdAt: this.clock.now().toISOString(), toolCallId: p.call.id, modelCallId, toolConfigurationName: p.call.name, toolName: p.tool?.type ?? 'unknown', toolInput: p.shown, arguments: p.call.arguments || '{}', step, inputsSeen: turn.inputsSeen },
      })),
    );
    const pending: PendingClientCall[] = [];
    const toolCtx: ToolContext = {
      agentKey: setup.agent.key,
      sessionKey: setup.state.key,
      session: turn.state,
      now: this.clock.now(),
      signal: turn.signal,
      canReadCorpus: setup.canReadCorpus,
      refs: setup.refs,
      canUseAgent: setup.canUseAgent,
      canWriteCorpus: setup.canWriteCorpus,
      runs: setup.runs,
      callTool: (tool, name, args, ctx, transformContext) => this.caller.call(tool, name, args, ctx, transformContext),
      activity: setup.sink.activity ? (e) => setup.sink.activity!(e) : undefined,
      command: setup.ctx,
      artifactsNow: () => turn.state.artifacts,
      modelTakesImages: setup.imageSupport === true,
      recordImageRead: async (artifactId, detail) => {
        await turn.record({ type: 'SessionImageRead', data: { ...turn.base(turnId), artifactId, detail } });
      },
      storeArtifact: async (file) => {
        const sha256 = await this.artifacts.put(file.bytes);
        const artifactId = file.artifactId ?? `art_${this.ids.uuid()}`;
        await turn.record({ type: 'SessionArtifactUploaded', data: { ...turn.base(turnId), artifacts: [{ artifactId, filename: file.filename, mimeType: file.mimeType, sizeBytes: file.bytes.length, sha256, metadata: file.metadata }] } });
        return artifactId;
      },
    };
    await Promise.all(
      planned.map(async (p) => {
        if (!p.problem && p.tool?.type === 'client') {
          pending.push({ event_id: p.eventId, tool_call_id: p.call.id, tool_configuration_name: p.call.name, tool_name: 'client', arguments: p.shown });
          return;
        }
        const transformContext = { ...templateContext(setup.agent.config, setup.agent.key, turn.state, this.clock.now()), tools: latestToolOutputs(turn.state) };
        const result = p.problem || !p.tool ? { output: { error: p.problem }, error: true } : await this.caller.call(p.tool, p.call.name, p.resolved, { ...toolCtx, toolCallId: p.call.id, toolConfigurationName: p.call.name }, transformContext);
        const output = await this.fitted(result.output, p.tool, p.call, config, setup, turn, turnId);
        await turn.record({ type: 'SessionToolReturned', data: { ...turn.base(turnId), toolCallId: p.call.id, toolConfigurationName: p.call.name, toolName: p.tool?.type ?? 'unknown', toolOutput: output, error: result.error, step } });
      }),
    );
    return pending;
  }

  /**
   * A tool output as the model gets it: whole when it fits, else stored as a session artifact with a reference
   * and hints (artifact mode) or cut in place (truncate mode), as the agent's offloading and the tool's own
   * override say.
   */
  private async fitted(output: Record<string, unknown>, tool: ToolConfig | undefined, call: { id: string; name: string }, config: AgentConfig, setup: TurnSetup, turn: TurnState, turnId: string): Promise<Record<string, unknown>> {
    const decision = offloadDecision(output, config, setup.contextWindow ?? DEFAULT_CONTEXT_WINDOW, turn.promptTokens, tool?.tool_output_offloading as OffloadingConfig | undefined);
    if (!decision.over) return output;
    // What an artifact tool read is cut, never stored again: storing it would ask for another read, and so on.
    if (decision.mode === 'truncate' || ARTIFACT_TOOLS.includes(tool?.type ?? '')) return truncateOutput(output, decision.threshold);
    // Indented, so that the line tools (artifact_read, artifact_grep) have lines to work with.
    const bytes = Buffer.from(JSON.stringify(output, null, 2));
    const sha256 = await this.artifacts.put(bytes);
    const artifactId = `art_${this.ids.uuid()}`;
    await turn.record({
      type: 'SessionArtifactUploaded',
      data: { ...turn.base(turnId), artifacts: [{ artifactId, filename: `${call.name}-${call.id}.json`, mimeType: 'application/json', sizeBytes: bytes.length, sha256, metadata: { source: 'tool_output', tool_configuration_name: call.name, tool_call_id: call.id } }] },
    });
    const readers = Object.entries(config.tool_configurations).filter(([, t]) => ARTIFACT_TOOLS.includes(t.type)).map(([n]) => n);
    return {
      offloaded: true,
      artifact_id: artifactId,
      size_bytes: bytes.length,
      shape: Object.keys(output).slice(0, 50),
      hint: `The output (${bytes.length} bytes) is too large for the conversation and was stored as artifact ${artifactId}; read the parts you need with ${readers.join(', ') || 'the artifact tools'}.`,
    };
  }

  /** The answer as an event: structured (validated against its schema, asked again when it does not match) or text. */
  private async outputOf(step: StepConfig, stepName: string, answer: ModelAnswer, messages: PromptMessage[], turn: TurnState, turnId: string, setup: TurnSetup): Promise<{ event: Extract<SessionEvent, { type: 'SessionAgentOutput' | 'SessionStructuredOutput' }>; value: unknown; error?: DomainError }> {
    if (step.output_parser.type !== 'structured') {
      return { event: { type: 'SessionAgentOutput', data: { ...turn.base(turnId), content: answer.content, step: stepName, inputsSeen: turn.inputsSeen } }, value: answer.content };
    }
    const schema = step.output_parser.json_schema;
    let current = answer;
    let problem = '';
    for (let attempt = 1; ; attempt++) {
      problem = structuredProblem(current.content, schema.schema);
      if (!problem) {
        const value: unknown = JSON.parse(current.content);
        return { event: { type: 'SessionStructuredOutput', data: { ...turn.base(turnId), schemaName: schema.name, content: value, step: stepName, inputsSeen: turn.inputsSeen } }, value };
      }
      if (attempt >= STRUCTURED_ATTEMPTS) break;
      const retry: PromptMessage[] = [...messages, { role: 'assistant', content: current.content }, { role: 'user', content: `Your answer does not match the JSON schema ${schema.name}: ${problem}. Answer again with JSON only.` }];
      current = await this.model(setup, { messages: retry, tools: [], signal: turn.signal });
      turn.addUsage(current.usage);
    }
    // Nothing is lost: the last answer is kept as text, and the turn reports why it is not structured.
    return {
      event: { type: 'SessionAgentOutput', data: { ...turn.base(turnId), content: current.content, step: stepName, inputsSeen: turn.inputsSeen } },
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
