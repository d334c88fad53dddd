/**
 * The run-an-agent entry of the agents context (`@lib/agents/runs`): the ports through which the contexts that
 * drive agents (schedules, pipelines, connectors, aliases) reach it, and nothing else of it (docs/agent-rooms.md;
 * rule `contexts-reach-agents-through-the-run-port`). Ports only: interfaces, tokens and the shapes they carry;
 * their implementations live in the agents context and are provided by AgentsModule.
 */
export * from './application/runs/agent-runs.port';
export type { TurnSink } from './application/turn/turn-sink';
export { NO_SINK } from './application/turn/turn-sink';
export * from './application/runs/agent-use.port';
export { WAKEUP_SCHEDULER } from './application/agent-timers';
export * from './application/runs/agent-directory.port';
export * from './application/runs/condition-compiler.port';
export * from './application/runs/agent-secret-reader.port';
export * from './application/runs/turn-scoring.port';
