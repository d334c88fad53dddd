/**
 * The events entry of the agents context (`@lib/agents/events`): the event types of its streams. Domain code
 * only.
 */
export type { AgentEvent } from './domain/agent';
export type { AgentConfig } from './domain/agent-config';
export type { SessionEvent } from './domain/session-events';
export { inputText } from './domain/session-events';
export type { RecallVectorsEvent } from './domain/recall-vectors';
export { RECALL_VECTORS_CATEGORY } from './domain/recall-vectors';
export type { InstructionEvent, InstructionContent } from './domain/instruction';
export type { AgentSecretsEvent, AgentIdentityEvent } from './domain/agent-access';
export type { GlossaryEvent } from './domain/glossary';
export type { EvaluationEvent } from './domain/evaluation';
