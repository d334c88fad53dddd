/**
 * The events entry of the connectors context (`@lib/connectors/events`): the event types of its streams. Domain
 * code only.
 */
export type { ConnectorEvent, ConnectorSettings } from './domain/connector';
export type { ConnectorMessageEvent } from './domain/connector-message';
