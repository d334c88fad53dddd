/**
 * The events entry of the aliases context (`@lib/aliases/events`): the event types of its streams. Domain code
 * only.
 */
export type { AliasEvent, AliasSessionEvent } from './domain/alias';
export type { CanaryEvent, CanarySettings, CanaryFigures } from './domain/canary';
export { policyAgents } from './domain/alias';
