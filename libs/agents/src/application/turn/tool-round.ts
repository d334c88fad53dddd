import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK, DurableTimers, ID_GENERATOR, IdGenerator } from '@lib/platform';
import { applyOverrides, approvalPolicy, ToolCaller, type ToolConfig, UnresolvedRef } from '@lib/tools';
import type { AgentConfig, OffloadingConfig } from '../../domain/agent-config';
import type { ApprovedCall } from '../../domain/session-input';
import type { AgentToolContext } from '../tools/agent-tool-context';
import type { PendingClientCall, SessionEvent } from '../../domain/session-events';
import { INVOKE_SKILL_TOOL, skillRefusal } from '../../domain/skills';
import { MEMORY_TOOLS } from '../../domain/memory';
import { MemoryTools } from '../memory/memory-tool';
import { APPROVAL_TIMER_KIND, WAKEUP_SCHEDULER } from '../agent-timers';
import { compileCondition } from '../conditions';
import { GuardrailChecks } from '../guardrails/guardrail-checks';
import { decisionFields } from '../guardrails/input-guard';
import { guardrailsAt } from '../../domain/guardrails';
import { ArtifactStore } from '../sessions/artifact-store';
import type { ModelAnswer } from './model-call';
import { offloadDecision, truncateOutput } from './offload';
import { DEFAULT_CONTEXT_WINDOW, latestToolOutputs, templateContext } from './turn-parts';
import type { TurnSetup } from './turn-setup';
import type { TurnState } from './turn-state';
import { executeToolSpan } from './turn-spans';

const ARTIFACT_TOOLS = ['artifact_read', 'artifact_grep', 'artifact_jq'];

/** What a round leaves the turn to wait on: client calls, and calls waiting for a person's approval. */
export interface RoundWaits {
  readonly pending: PendingClientCall[];
  readonly approvals: number;
}

/** Where an approval's timer points: the session and the call it resolves as expired. */
export interface ApprovalTimerPayload {
  readonly agentKey: string;
  readonly sessionKey: string;
  readonly toolCallId: string;
}

type Planned = { call: { id: string; name: string; arguments: string }; tool?: ToolConfig; resolved: Record<string, unknown>; shown: Record<string, unknown>; problem?: string; eventId: string; skill?: boolean; memory?: boolean };

/**
 * The tool calls of one model answer: each checked (a known tool, allowed in the step, arguments a JSON object,
 * its `$ref`s resolved) and recorded, the service's tools run concurrently with their outputs fitted to the
 * context, the client tools' calls returned for the turn to wait on, and the calls of tools that
 * `requires_approval` recorded as waiting for a decision (they do not run; `runApproved` runs them once approved).
 */
@Injectable()
export class ToolRound {
  constructor(
    private readonly caller: ToolCaller,
    private readonly artifacts: ArtifactStore,
    private readonly guardrails: GuardrailChecks,
    @Inject(WAKEUP_SCHEDULER) private readonly timers: DurableTimers,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly memoryTools: MemoryTools,
  ) {}

  /** Records the calls, asks for the approvals they need, runs the service's other tools concurrently, and returns what the turn waits on. */
  async run(config: AgentConfig, step: string, answer: ModelAnswer, turn: TurnState, turnId: string, setup: TurnSetup): Promise<RoundWaits> {
    const modelCallId = `mc_${this.ids.uuid()}`;
    const planned = answer.toolCalls.map((call): Planned & { args: Record<string, unknown> } => {
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
      // `invoke_skill` is built in (validation keeps a tool configuration from taking its name while skills exist).
      const skill = !tool && call.name === INVOKE_SKILL_TOOL;
      // `memory_replace`/`memory_append` are built in too, while a writable memory block is in the session's scope.
      const memory = !tool && MEMORY_TOOLS.includes(call.name) && MemoryTools.offered(config, turn.state.endUser !== undefined).length > 0;
      if (skill) problem ??= skillRefusal(config.skills, config.steps[step].allowed_skills, step, args.skill_name);
      else if (!tool && !memory) problem = `there is no tool named ${call.name}`;
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
      return { call, tool, args, resolved, shown, problem, eventId: turn.newEventId(), skill, memory };
    });
    const guarded = await this.guardCalls(config, planned, turn, turnId, setup);
    await turn.recordMany([
      ...planned.map((p) => ({
        type: 'SessionToolCalled' as const,
        data: { eventId: p.eventId, turnId, createdAt: this.clock.now().toISOString(), toolCallId: p.call.id, modelCallId, toolConfigurationName: p.call.name, toolName: p.skill ? INVOKE_SKILL_TOOL : p.memory ? p.call.name : (p.tool?.type ?? 'unknown'), toolInput: p.shown, arguments: p.call.arguments || '{}', step, inputsSeen: turn.inputsSeen, usage: answer.usage },
      })),
      ...guarded,
    ]);
    // A replay asks a person only where the record did (docs/replay.md): its recorded decision is sent again.
    const waiting = planned.filter((p) => !p.problem && p.tool && p.tool.type !== 'client' && (setup.replay ? setup.replay.approves(p.call.id) : this.needsApproval(p.tool, p.args, setup, turn)));
    await this.requestApprovals(waiting, turn, turnId, setup);
    const pending: PendingClientCall[] = [];
    const toolCtx = this.toolContext(turn, turnId, setup);
    await Promise.all(
      planned.map(async (p) => {
        if (waiting.includes(p)) return;
        if (p.skill) return void (await executeToolSpan(INVOKE_SKILL_TOOL, INVOKE_SKILL_TOOL, p.call.id, answer.traceparent, async () => (await this.loadSkill(p, config, step, turn, turnId), { error: !!p.problem })));
        if (p.memory) return void (await executeToolSpan(p.call.name, p.call.name, p.call.id, answer.traceparent, () => this.memoryTools.run(p, config, step, turn, turnId, setup)));
        if (!p.problem && p.tool?.type === 'client') {
          pending.push({ event_id: p.eventId, tool_call_id: p.call.id, tool_configuration_name: p.call.name, tool_name: 'client', arguments: p.shown });
          return;
        }
        await this.execute(p, config, step, toolCtx, turn, turnId, setup, answer.traceparent);
      }),
    );
    return { pending, approvals: waiting.length };
  }

  /**
   * The calls a person approved, run as the resumed turn's first work (concurrently, as a round's calls): the
   * approver's arguments or the model's, with the configuration's overrides applied as for any call.
   */
  async runApproved(config: AgentConfig, step: string, approved: readonly ApprovedCall[], turn: TurnState, turnId: string, setup: TurnSetup): Promise<void> {
    const toolCtx = this.toolContext(turn, turnId, setup);
    await Promise.all(
      approved.map(async (a) => {
        const tool = config.tool_configurations[a.toolConfigurationName];
        const call = { id: a.toolCallId, name: a.toolConfigurationName, arguments: JSON.stringify(a.arguments) };
        let problem = tool ? undefined : `there is no tool named ${a.toolConfigurationName} any more`;
        let resolved = a.arguments;
        if (tool) {
          try {
            ({ resolved } = applyOverrides(a.arguments, tool.argument_override, setup.refs));
          } catch (e) {
            if (!(e instanceof UnresolvedRef)) throw e;
            problem = e.message;
          }
        }
        await this.execute({ call, tool, resolved, shown: a.arguments, problem, eventId: '' }, config, step, toolCtx, turn, turnId, setup);
      }),
    );
  }

  /**
   * The tool-call guardrails, before anything runs or waits for approval: a call one blocks does not run, and the
   * model reads an error saying which guardrail stopped it and why. Checked as stored (secrets masked).
   */
  private async guardCalls(config: AgentConfig, planned: Planned[], turn: TurnState, turnId: string, setup: TurnSetup): Promise<SessionEvent[]> {
    const guards = guardrailsAt(config.guardrails, 'tool_call');
    const events: SessionEvent[] = [];
    if (!guards.length) return events;
    for (const p of planned) {
      if (p.problem || !p.tool) continue;
      const outcome = await this.guardrails.check(guards, 'tool_call', `${p.call.name} ${JSON.stringify(p.shown)}`, { label: 'TOOL CALL', ctx: setup.ctx });
      for (const d of outcome.decisions) events.push({ type: 'SessionGuardrailTriggered', data: { ...turn.base(turnId), ...decisionFields(d), toolCallId: p.call.id } });
      if (outcome.stop) p.problem = `the call was blocked by guardrail ${outcome.stop.guardrail}: ${outcome.stop.reason}`;
    }
    return events;
  }

  /** Whether a call waits for approval: its tool requires one and the rule's `when` (if any) holds; a `when` that fails to evaluate holds (fail closed). */
  private needsApproval(tool: ToolConfig, args: Record<string, unknown>, setup: TurnSetup, turn: TurnState): boolean {
    const policy = approvalPolicy(tool);
    if (!policy) return false;
    if (policy.when === undefined) return true;
    try {
      return compileCondition(policy.when, 'requires_approval.when')({ ...templateContext(setup.agent.config, setup.agent.key, turn.state, this.clock.now()), args }) !== false;
    } catch {
      return true;
    }
  }

  /**
   * Records the calls as waiting for approval, each with a durable timer that resolves it as expired. The timers
   * are set first: one whose request was never stored finds nothing to expire.
   */
  private async requestApprovals(waiting: readonly Planned[], turn: TurnState, turnId: string, setup: TurnSetup): Promise<void> {
    if (!waiting.length) return;
    const now = this.clock.now();
    const sessionUser = setup.sessionUser ?? setup.state.endUser ?? `${setup.ctx.actor.type}:${setup.ctx.actor.id}`;
    const events: SessionEvent[] = [];
    for (const p of waiting) {
      const policy = approvalPolicy(p.tool!)!;
      const expiresAt = new Date(now.getTime() + policy.timeoutMs);
      const timerId = `approval-${this.ids.uuid()}`;
      await this.timers.schedule({ timerId, kind: APPROVAL_TIMER_KIND, dueAt: expiresAt, payload: { agentKey: setup.agent.key, sessionKey: setup.state.key, toolCallId: p.call.id } satisfies ApprovalTimerPayload });
      events.push({
        type: 'SessionToolApprovalRequested',
        data: { ...turn.base(turnId), createdAt: now.toISOString(), toolCallId: p.call.id, toolName: p.tool!.type, toolConfigurationName: p.call.name, arguments: p.shown, expiresAt: expiresAt.toISOString(), approvers: policy.approvers, sessionUser, timerId },
      });
    }
    await turn.recordMany(events);
  }

  /**
   * `invoke_skill`: the tool's output says the skill is loaded and a `skill_load` event, stored with it, puts the
   * skill's content before the model as a user message after the output. An unknown skill, or one the step does
   * not allow, is a tool error the model reads; the turn goes on.
   */
  private async loadSkill(p: Planned, config: AgentConfig, step: string, turn: TurnState, turnId: string): Promise<void> {
    const names = { toolCallId: p.call.id, toolConfigurationName: INVOKE_SKILL_TOOL, toolName: INVOKE_SKILL_TOOL, step };
    if (p.problem) {
      await turn.record({ type: 'SessionToolReturned', data: { ...turn.base(turnId), ...names, toolOutput: { error: p.problem }, error: true } });
      return;
    }
    const skillName = String(p.resolved.skill_name);
    await turn.recordMany([
      { type: 'SessionToolReturned', data: { ...turn.base(turnId), ...names, toolOutput: { skill_name: skillName, loaded: true, note: 'The skill\'s instructions follow as the next message.' }, error: false } },
      { type: 'SessionSkillLoaded', data: { ...turn.base(turnId), skillName, content: config.skills![skillName].content, step, toolCallId: p.call.id } },
    ]);
  }

  private async execute(p: Planned, config: AgentConfig, step: string, toolCtx: AgentToolContext, turn: TurnState, turnId: string, setup: TurnSetup, chatSpan?: string): Promise<void> {
    const transformContext = { ...templateContext(setup.agent.config, setup.agent.key, turn.state, this.clock.now()), tools: latestToolOutputs(turn.state) };
    const result = await executeToolSpan(p.call.name, p.tool?.type ?? 'unknown', p.call.id, chatSpan, async () =>
      p.problem || !p.tool ? { output: { error: p.problem }, error: true } : (setup.replay?.toolOutput({ id: p.call.id, name: p.call.name, arguments: p.call.arguments, tool: p.tool }) ?? this.caller.call(p.tool, p.call.name, p.resolved, { ...toolCtx, toolCallId: p.call.id, toolConfigurationName: p.call.name }, transformContext)),
    );
    const output = await this.fitted(result.output, p.tool, p.call, config, setup, turn, turnId);
    await turn.record({ type: 'SessionToolReturned', data: { ...turn.base(turnId), toolCallId: p.call.id, toolConfigurationName: p.call.name, toolName: p.tool?.type ?? 'unknown', toolOutput: output, error: result.error, step } });
  }

  private toolContext(turn: TurnState, turnId: string, setup: TurnSetup): AgentToolContext {
    return {
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
}
