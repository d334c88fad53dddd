import { Inject, Injectable } from '@nestjs/common';
import { findLlm, quotaProblems } from '@lib/llms';
import { VelocityText } from '@lib/retrieval';
import { CommandContext, invalid, READ_STORE, ReadStore, StreamWriter, streamId } from '@lib/platform';
import { Sandbox, type ToolConfig, transformProblems } from '@lib/tools';
import { type AgentConfig, validateAgentConfig } from '../domain/agent-config';
import { AgentEvent, agentFold, AgentState } from '../domain/agent';
import { compileCondition } from './conditions';
import { AGENTS, AgentRow } from '../read-models';

/** Every expression and template of the configuration compiles (conditions, inline instructions, reminders). */
function conditionProblems(config: AgentConfig): Record<string, string> {
  const problems: Record<string, string> = {};
  const tryCompile = (source: string | undefined, field: string) => {
    if (source === undefined) return;
    try {
      compileCondition(source, field);
    } catch (e) {
      problems[field] = (e as Error).message;
    }
  };
  tryCompile(config.run_condition, 'run_condition');
  for (const [name, tool] of Object.entries(config.tool_configurations)) {
    const when = (tool.requires_approval as { when?: unknown } | undefined)?.when;
    if (typeof when === 'string') tryCompile(when, `tool_configurations.${name}.requires_approval.when`);
  }
  const tryTemplate = (source: string, type: string | undefined, field: string) => {
    if (type === 'text') return;
    try {
      VelocityText.compile(source, field);
    } catch (e) {
      problems[field] = (e as Error).message;
    }
  };
  for (const [name, step] of Object.entries(config.steps)) {
    step.next_steps.forEach((n, i) => tryCompile(n.condition, `steps.${name}.next_steps[${i}].condition`));
    step.instructions.forEach((ins, i) => ins.type === 'inline' && tryTemplate(ins.template, ins.template_type, `steps.${name}.instructions[${i}].template`));
    step.reminders.forEach((r, i) => r.type === 'templated' && tryTemplate(r.template, r.template_type, `steps.${name}.reminders[${i}].template`));
  }
  return problems;
}

export const agentStream = (key: string): string => streamId('agent', key);

/** Checks a configuration makes against the rest of the service (a 400 names the field), before it is written. */
export type ReferenceCheck = (config: AgentConfig) => Promise<Record<string, string>>;
export const AGENT_REFERENCE_CHECKS = Symbol('AgentReferenceChecks');

/** The agents' write path (one stream per key, which makes keys unique) and their lookups. */
@Injectable()
export class AgentWriter {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(AGENT_REFERENCE_CHECKS) private readonly checks: readonly ReferenceCheck[],
    private readonly sandbox: Sandbox,
  ) {}

  write(key: string, decide: (state: AgentState) => readonly AgentEvent[], ctx: CommandContext) {
    return this.streams.write(agentStream(key), agentFold, decide, ctx, ['agents']);
  }

  state(key: string): Promise<AgentState> {
    return this.streams.state(agentStream(key), agentFold);
  }

  /**
   * The configuration's shape is whole (the domain's check, so what follows reads only fields that are there), the
   * model is registered, and every other reference resolves (instructions, …): else 400 on the field.
   */
  async checkReferences(config: AgentConfig): Promise<void> {
    validateAgentConfig(config);
    const problems: Record<string, string> = {};
    if (!(await findLlm(this.reads, config.model.name))) problems['model.name'] = `no LLM named "${config.model.name}" is registered (GET /v2/llms lists them)`;
    Object.assign(problems, conditionProblems(config));
    if (config.llm_quota) Object.assign(problems, quotaProblems(config.llm_quota));
    Object.assign(problems, await this.transformProblems(config.tool_configurations, 'tool_configurations.'));
    for (const check of this.checks) Object.assign(problems, await check(config));
    const first = Object.entries(problems)[0];
    if (first) throw invalid('agent.invalid_reference', `Invalid ${first[0]}: ${first[1]}`, problems);
  }

  /** Tools' jq transforms must compile (libs/tools' check, in the sandbox). */
  transformProblems(tools: Readonly<Record<string, ToolConfig>>, prefix: string): Promise<Record<string, string>> {
    return transformProblems(this.sandbox, tools, prefix);
  }

  row(key: string): Promise<AgentRow | undefined> {
    return this.reads.get<AgentRow>(AGENTS, key);
  }
}
