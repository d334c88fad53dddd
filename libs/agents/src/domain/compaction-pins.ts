import type { AgentConfig } from './agent-config';
import type { SessionApiEvent } from './session-events';

/**
 * What a compaction never takes (docs/agents.md, "Compaction in pieces"): the tool calls and results of the running
 * turn, and the latest result of each tool the agent reads through `tools.<name>` (a `next_steps` condition, a tool
 * configuration's templates), with the call that asked for it, so the model keeps reading what the step decides on.
 */
export function pinnedEventIds(visible: readonly SessionApiEvent[], config: AgentConfig, turnId?: string): Set<string> {
  const read = toolsRead(config);
  const latest = new Map<string, string>();
  for (const e of visible) if (e.type === 'SessionToolReturned' && read.has(e.data.toolConfigurationName)) latest.set(e.data.toolConfigurationName, e.data.toolCallId);
  const calls = new Set(latest.values());
  const pinned = new Set<string>();
  for (const e of visible) {
    const ofTurn = turnId !== undefined && (e.data as { turnId?: string }).turnId === turnId;
    if (e.type === 'SessionToolCalled' || e.type === 'SessionToolReturned') {
      if (ofTurn || calls.has(e.data.toolCallId)) pinned.add(e.data.eventId);
    } else if (ofTurn && (e.type === 'SessionSkillLoaded' || e.type === 'SessionImageRead')) pinned.add(e.data.eventId);
  }
  return pinned;
}

/** The tool configurations whose latest output a condition or a tool configuration reads as `tools.<name>`. */
export function toolsRead(config: AgentConfig): Set<string> {
  const text = [...Object.values(config.steps).flatMap((s) => s.next_steps.map((n) => n.condition ?? '')), JSON.stringify(config.tool_configurations)].join('\n');
  const read = new Set<string>();
  for (const name of Object.keys(config.tool_configurations)) {
    const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // `tools.name`, `$tools.name`, `tools["name"]`, `tools['name']`, and the same with JSON's escaped quotes.
    if (new RegExp(`tools\\s*\\.\\s*${n}(?![\\w$])|tools\\s*\\[\\s*\\\\?["']${n}\\\\?["']`).test(text)) read.add(name);
  }
  return read;
}
