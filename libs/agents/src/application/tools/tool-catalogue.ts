import type { Type } from '@nestjs/common';
import { MEMORY_TOOLS } from '../../domain/memory';
import { BUILTIN_TOOL_ENTRIES, hasSideEffects, NAMED_TOOL_ENTRIES, toolProviders, toolRegistry as registryOf, sessionRecallCheck, subAgentCheck, type Tool, type ToolConfig, type ToolRegistry, type ToolTypeEntry } from '@lib/tools';
import { GlossaryDeleteEntriesTool, GlossaryPutEntriesTool } from './glossary-tools';
import { ScheduleWakeupTool } from './schedule-wakeup';
import { SessionRecallTool } from './session-recall';
import { SubAgentTool } from './sub-agent';

/** The agent-level tool types: abilities of a session (wake-ups, the agent's glossaries, other agents). */
export const AGENT_TOOL_ENTRIES: readonly ToolTypeEntry[] = [
  { type: 'schedule_wakeup', catalogue: { title: 'Schedule a wakeup', category: 'agents', tool_groups: ['agents'], sample: {} }, tool: ScheduleWakeupTool, sideEffects: true },
  { type: 'glossary_put_entries', catalogue: { title: 'Add glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} }, tool: GlossaryPutEntriesTool, sideEffects: true },
  { type: 'glossary_delete_entries', catalogue: { title: 'Remove glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} }, tool: GlossaryDeleteEntriesTool, sideEffects: true },
  { type: 'session_recall', catalogue: { title: 'Recall past sessions', category: 'agents', tool_groups: ['agents'], sample: {} }, check: sessionRecallCheck, tool: SessionRecallTool, sideEffects: false },
  { type: 'sub_agent', catalogue: { title: 'Sub-agent', category: 'agents', tool_groups: ['agents'], sample: { sub_agent_configuration: { agent_key: '<agent>' } } }, check: subAgentCheck, tool: SubAgentTool, sideEffects: true },
];

/** Every tool type, in the order `/v2/tools` lists the built-ins: libs/tools' built-ins, the agent-level ones, then those named by `tool_id`. */
export const TOOL_TYPE_ENTRIES: readonly ToolTypeEntry[] = [...BUILTIN_TOOL_ENTRIES, ...AGENT_TOOL_ENTRIES, ...NAMED_TOOL_ENTRIES];

/** The providers of the tools the service runs, each once (ToolsModule provides libs/tools' own; this module the agent-level ones). */
export const TOOL_PROVIDERS: readonly Type<Tool>[] = toolProviders(TOOL_TYPE_ENTRIES);

/** The agent-level tools' providers (this module provides them). */
export const AGENT_TOOL_PROVIDERS: readonly Type<Tool>[] = toolProviders(AGENT_TOOL_ENTRIES);

/** The registry of every tool type from the providers' instances (`tools[i]` is `TOOL_PROVIDERS[i]`'s). */
export function toolRegistry(tools: readonly Tool[], entries: readonly ToolTypeEntry[] = TOOL_TYPE_ENTRIES, providers: readonly Type<Tool>[] = TOOL_PROVIDERS): ToolRegistry {
  return registryOf(tools, entries, providers);
}

/** Whether a call of a configured tool changes something outside the session (replays refuse it unless allowed). */
// The built-in memory tools write the agent's memory (issue 46): a replay does not edit it again.
export const toolCallHasSideEffects = (tool: ToolConfig, args: Record<string, unknown>): boolean => MEMORY_TOOLS.includes(tool.type) || hasSideEffects(TOOL_TYPE_ENTRIES, tool, args);
