/**
 * The events entry of the agents context (`@lib/agents/events`): the event types of its streams. Domain code
 * only.
 */
export type { AgentEvent } from './domain/agent';
export type { AgentConfig } from './domain/agent-config';
export type { SessionEvent } from './domain/session-events';
export type { InstructionEvent, InstructionContent } from './domain/instruction';
export type { AgentSecretsEvent, AgentIdentityEvent } from './domain/agent-access';
export type { ToolConfigurationEvent, ReusableToolConfig } from './domain/tool-configuration';
export type { ToolServerEvent } from './domain/tool-server';
export { serverToolId } from './domain/tool-server';
export type { GlossaryEvent } from './domain/glossary';
export type { UserToolEvent } from './domain/user-tool';
export type { ScheduleEvent } from './domain/schedule';
export { SCHEDULE_MAX_ATTEMPTS } from './domain/schedule';
export type { AliasEvent, AliasSessionEvent } from './domain/alias';
export { policyAgents } from './domain/alias';
export type { PipelineEvent } from './domain/pipeline';
export type { PipelineRunEvent } from './domain/pipeline-run';
