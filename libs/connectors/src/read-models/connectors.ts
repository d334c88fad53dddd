import { collection } from '@lib/platform/projections';
import type { ConnectorSettings } from '../domain/connector';

/** One row per connector (projections/connectors/connectors), keyed by the connector id. */
export type ConnectorRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly agent_key: string;
  readonly type: string;
  readonly enabled: boolean;
  readonly settings: ConnectorSettings;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_webhook_at: string | null;
};

/** One row per inbound message whose reply is not yet delivered or given up (the replier's sweep reads them). */
export type ConnectorDeliveryRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly agent_key: string;
  readonly connector_id: string;
  readonly delivery_id: string;
  readonly open: boolean;
  /** When the next attempt is due (received time for the first). */
  readonly due_at: string;
};

export const CONNECTORS = collection<ConnectorRow>('agent_connectors');
export const CONNECTOR_DELIVERIES = collection<ConnectorDeliveryRow>('agent_connector_deliveries');

/** The inbound path of each type (the reference's `webhook_path` examples: Slack `/input`, Zoom `/zoom`, Chat `/gchat`). */
export const WEBHOOK_SUFFIX = { slack: 'input', gchat: 'gchat', zoom: 'zoom' } as const;
export const webhookPath = (agentKey: string, id: string, type: keyof typeof WEBHOOK_SUFFIX) => `/v2/agents/${encodeURIComponent(agentKey)}/connectors/${id}/${WEBHOOK_SUFFIX[type]}`;

const MASK = '****';

/**
 * The reference's AgentConnector. A credential reads `****`, or the `$ref` it names (a name is not a secret);
 * `reveal` gives values in clear where the API shows them once (Zoom's generated token, in the create answer).
 */
export function connectorView(row: ConnectorRow, reveal: Record<string, string> = {}): Record<string, unknown> {
  const s = row.settings;
  const secrets = Object.fromEntries(Object.entries(s.secrets).map(([field, source]) => [field, reveal[field] ?? ('ref' in source ? { $ref: `agent.secrets.${source.ref}` } : MASK)]));
  return {
    id: row.id,
    agent_key: row.agent_key,
    name: s.name,
    ...(s.description !== undefined ? { description: s.description } : {}),
    type: s.type,
    status: s.enabled ? 'active' : 'inactive',
    metadata: s.metadata,
    enabled: s.enabled,
    configuration: { type: s.type, ...s.plain, ...secrets, ...(s.type === 'gchat' ? {} : { webhook_path: webhookPath(row.agent_key, row.id, s.type) }) },
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.last_webhook_at ? { last_webhook_at: row.last_webhook_at, last_webhook_status: 'success' } : {}),
  };
}
