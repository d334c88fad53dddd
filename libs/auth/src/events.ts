/**
 * The events entry of the auth context (`@lib/auth/events`): the event types of its streams and the pure helpers
 * projections need to read them. Domain code only: loads no framework or adapter.
 */
export type { ApiKeyEvent } from './domain/api-key';
export type { AppClientEvent } from './domain/app-client';
export type { UserEvent } from './domain/user';
export { toWireGrants } from './domain/roles';
