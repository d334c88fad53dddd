import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';

/** The platforms a connector serves (the reference's `ConnectorConfiguration` variants). */
export type ConnectorType = 'slack' | 'gchat' | 'zoom';
export const CONNECTOR_TYPES: readonly ConnectorType[] = ['slack', 'gchat', 'zoom'];

/** Fields of each type that hold a credential: never stored or shown in clear. */
export const SECRET_FIELDS: Readonly<Record<ConnectorType, readonly string[]>> = {
  slack: ['bot_token', 'signing_secret'],
  gchat: ['service_account_key'],
  zoom: ['callback_access_token', 'connector_token'],
};

/** Where a credential comes from: the agent's secrets by name, or the sealed values of the connector's own event. */
export type SecretSource = { readonly ref: string } | { readonly sealed: true };

/**
 * A connector as stored: settings and the configuration's plain fields in clear, each credential named by its
 * source. Literal credentials (and Zoom's generated token) live sealed in the event's `sealed` field.
 */
export interface ConnectorSettings {
  readonly name: string;
  readonly description?: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  readonly type: ConnectorType;
  /** Plain fields of the configuration (`api_app_id`, `callback_url`, `audience_url`, …). */
  readonly plain: Readonly<Record<string, unknown>>;
  readonly secrets: Readonly<Record<string, SecretSource>>;
}

/** `sealed` is the service's SecretBox output over the literal credentials, bound to the connector id. */
export type ConnectorEvent =
  | { type: 'ConnectorCreated'; data: { agentId: string; agentKey: string; connectorId: string; settings: ConnectorSettings; sealed: Record<string, unknown> | null; createdAt: string } }
  | { type: 'ConnectorUpdated'; data: { agentId: string; agentKey: string; connectorId: string; settings: ConnectorSettings; sealed: Record<string, unknown> | null; updatedAt: string } }
  | { type: 'ConnectorDeleted'; data: { agentId: string; agentKey: string; connectorId: string; type: ConnectorType; deletedAt: string } };

export type ConnectorState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly agentId: string; readonly agentKey: string; readonly connectorId: string; readonly settings: ConnectorSettings; readonly sealed: Record<string, unknown> | null }
  | { readonly status: 'deleted' };

export const connectorFold = {
  initialState: { status: 'absent' } as ConnectorState,
  evolve(state: ConnectorState, event: ConnectorEvent): ConnectorState {
    switch (event.type) {
      case 'ConnectorCreated':
      case 'ConnectorUpdated':
        return { status: 'active', agentId: event.data.agentId, agentKey: event.data.agentKey, connectorId: event.data.connectorId, settings: event.data.settings, sealed: event.data.sealed };
      case 'ConnectorDeleted':
        // Ids are never reused: a deleted connector's webhook stays gone.
        return { status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
};

export const connectorNotFound = (agentKey: string, id: string) => notFound('connector.not_found', `Agent "${agentKey}" has no connector "${id}"`, id);
export const invalidConnector = (field: string, reason: string) => invalid('connector.invalid', `Invalid ${field}: ${reason}`, { [field]: reason });

export function decideCreateConnector(state: ConnectorState, ids: { agentId: string; agentKey: string; connectorId: string }, settings: ConnectorSettings, sealed: Record<string, unknown> | null, now: Date): ConnectorEvent[] {
  if (state.status !== 'absent') throw conflict('connector.exists', `Connector "${ids.connectorId}" already exists`);
  return [{ type: 'ConnectorCreated', data: { ...ids, settings, sealed, createdAt: now.toISOString() } }];
}

export function decideUpdateConnector(state: ConnectorState, agentKey: string, connectorId: string, settings: ConnectorSettings, sealed: Record<string, unknown> | null, now: Date): ConnectorEvent[] {
  if (state.status !== 'active' || state.agentKey !== agentKey) throw connectorNotFound(agentKey, connectorId);
  if (settings.type !== state.settings.type) throw invalidConnector('configuration.type', `a ${state.settings.type} connector stays ${state.settings.type}; create another connector for ${settings.type}`);
  return [{ type: 'ConnectorUpdated', data: { agentId: state.agentId, agentKey, connectorId, settings, sealed, updatedAt: now.toISOString() } }];
}

export function decideDeleteConnector(state: ConnectorState, agentKey: string, connectorId: string, now: Date): ConnectorEvent[] {
  if (state.status !== 'active' || state.agentKey !== agentKey) throw connectorNotFound(agentKey, connectorId);
  return [{ type: 'ConnectorDeleted', data: { agentId: state.agentId, agentKey, connectorId, type: state.settings.type, deletedAt: now.toISOString() } }];
}
