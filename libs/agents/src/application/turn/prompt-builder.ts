import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK, DomainError } from '@lib/platform';
import { AGENT_TOOLS, clientToolDefinition, ToolDefinition, ToolRegistry } from '@lib/tools';
import type { AgentConfig, GlossaryExpansionReminder, StepConfig, TemplatedReminder } from '../../domain/agent-config';
import { expandTerms } from '../../domain/glossary';
import { historyMessages, PromptMessage } from '../../domain/history';
import type { ActiveSession } from '../../domain/session';
import { invokeSkillDefinition, skillsPrompt, stepSkills } from '../../domain/skills';
import { memoryPrompt, memoryToolDefinitions } from '../../domain/memory';
import { AgentMemory } from '../memory/agent-memory';
import { MemoryTools } from '../memory/memory-tool';
import { Glossaries } from '../glossaries/glossaries';
import { InstructionTexts } from '../instruction-texts';
import { ArtifactStore } from '../sessions/artifact-store';
import { renderTemplate, templateContext } from './turn-parts';
import type { TurnSetup } from './turn-setup';

/**
 * What a turn sends the model at each call: the step's instructions rendered (inline, or from
 * `/v2/instructions` by reference) and the list of its skills, the session's history with its reminders, glossary
 * expansions, images and loaded skills, and the definitions of the tools the step allows.
 */
@Injectable()
export class PromptBuilder {
  constructor(
    @Inject(AGENT_TOOLS) private readonly tools: ToolRegistry,
    private readonly instructions: InstructionTexts,
    private readonly glossaries: Glossaries,
    private readonly artifacts: ArtifactStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly memory: AgentMemory,
  ) {}

  /** System instructions of the step (inline, or from `/v2/instructions` by reference), then the history. */
  async prompt(config: AgentConfig, step: string, state: ActiveSession, setup: TurnSetup): Promise<PromptMessage[]> {
    const memory = await this.memory.inScope(setup.agent, state);
    const context = templateContext(config, setup.agent.key, state, this.clock.now(), Object.fromEntries(memory.map((m) => [m.block.key, m.value])));
    const texts = await Promise.all(
      (config.steps[step]?.instructions ?? []).map(async (ins, i) => {
        const field = `steps.${step}.instructions[${i}]`;
        if (ins.type === 'inline') return renderTemplate(ins.template, ins.template_type, context, `${field}.template`);
        const found = await this.instructions.resolve(ins);
        if (!found) throw new DomainError('unprocessable', 'agent.instruction_missing', `${field} refers to instruction ${ins.id}${ins.version ? ` version ${ins.version}` : ''}, which does not exist`);
        return renderTemplate(found.template, found.template_type, context, `${field} (${found.name})`);
      }),
    );
    // The skills the step may load are listed after its instructions; their content only comes when one is loaded.
    const skills = skillsPrompt(stepSkills(config.skills, config.steps[step]?.allowed_skills));
    // The memory blocks in the session's scope follow the step's instructions, with their values (issue 46).
    const instructions = [...texts, memoryPrompt(memory), skills].filter(Boolean).join('\n\n');
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

  /** The step's allowed tools, and `invoke_skill` when the step may load at least one skill. */
  toolDefinitions(config: AgentConfig, step: StepConfig, state?: ActiveSession): ToolDefinition[] {
    const names = step.allowed_tools ?? Object.keys(config.tool_configurations);
    const skills = stepSkills(config.skills, step.allowed_skills);
    // memory_replace and memory_append while a writable block is in the session's scope (an end user's only with one).
    const memory = memoryToolDefinitions(MemoryTools.offered(config, state?.endUser !== undefined)) as ToolDefinition[];
    return [...this.configuredTools(config, names), ...(skills.length ? [invokeSkillDefinition(skills) as ToolDefinition] : []), ...memory];
  }

  private configuredTools(config: AgentConfig, names: readonly string[]): ToolDefinition[] {
    return names
      .filter((n) => config.tool_configurations[n] && config.tool_configurations[n].enabled !== false)
      .map((n) => {
        const tool = config.tool_configurations[n];
        const runner = this.tools.get(tool.type);
        return runner ? runner.definition(n, tool) : clientToolDefinition(n, tool);
      });
  }
}
