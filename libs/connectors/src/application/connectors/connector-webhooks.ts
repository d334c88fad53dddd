import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SESSIONS, sessionRowId } from '@lib/agents/read-models';
import { CommandContext, DomainError, READ_STORE, ReadStore, StreamWriter, streamId } from '@lib/platform';
import { connectorNotFound, ConnectorType } from '../../domain/connector';
import { connectorMessageFold, ConnectorMessageEvent, ConnectorMessageState, decideReceive } from '../../domain/connector-message';
import { Connectors } from './connectors';
import { CONNECTOR_PLATFORMS, ConnectorPlatformSet, InboundRequest } from './connector-platform.port';

const hash = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);
export const connectorMessageStream = (connectorId: string, deliveryId: string) => streamId('connector_message', `${connectorId}.${hash(deliveryId, 32)}`);
/** One session per conversation of a connector, found again by the same key for its next message. */
export const connectorSessionKey = (connectorId: string, conversation: string) => `con-${hash(`${connectorId}|${conversation}`, 24)}`;

/**
 * The edge's say on a delivery, told once its platform authentication is known (before anything is stored): it may
 * throw (429) to count a failure against the sender's address or a delivery against the connector's limit.
 * `false` for a delivery that is not the platform's, or to a connector that does not exist.
 */
export type WebhookGate = (authenticated: boolean) => Promise<void>;

/**
 * Inbound webhooks (docs/connectors.md): the connector is read from its stream, the request authenticated as its
 * platform does (401 and nothing stored otherwise), a message stored once per platform delivery, and the
 * platform acknowledged at once; the agent's turn and the reply run in the worker wing (ConnectorReplier).
 */
@Injectable()
export class ConnectorWebhooks {
  constructor(
    private readonly connectors: Connectors,
    @Inject(CONNECTOR_PLATFORMS) private readonly platforms: ConnectorPlatformSet,
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async receive(agentKey: string, connectorId: string, type: ConnectorType, req: InboundRequest, requestId: string, gate: WebhookGate = async () => undefined): Promise<unknown> {
    const connector = await this.connectors.live(agentKey, connectorId);
    if (!connector || connector.settings.type !== type) {
      await gate(false);
      throw connectorNotFound(agentKey, connectorId);
    }
    const platform = this.platforms.of(type);
    const authenticated = await platform.verify(connector, req);
    await gate(authenticated);
    if (!authenticated) throw new DomainError('unauthenticated', 'connector.auth_failed', `The request is not authenticated as ${type} signs its deliveries to this connector`);
    if (!connector.settings.enabled) throw new DomainError('conflict', 'connector.disabled', `Connector "${connectorId}" is disabled`);
    const inbound = platform.parse(connector, req);
    if (inbound.kind === 'message') {
      const sessionKey = connectorSessionKey(connectorId, inbound.conversation);
      if (inbound.onlyInKnownConversation && !(await this.reads.get(SESSIONS, sessionRowId(connector.agentId, sessionKey)))) return platform.acknowledgement(connector, { kind: 'ignore' });
      const ctx: CommandContext = { actor: { type: 'system', id: `connector:${connectorId}` }, requestId, commandId: `connector:${connectorId}:${inbound.deliveryId}`, now: req.now };
      const received = { agentId: connector.agentId, agentKey, connectorId, deliveryId: inbound.deliveryId, type, conversation: inbound.conversation, sessionKey, text: inbound.text, replyTo: inbound.replyTo, receivedAt: req.now.toISOString() };
      await this.streams.write<ConnectorMessageState, ConnectorMessageEvent>(connectorMessageStream(connectorId, inbound.deliveryId), connectorMessageFold, (s) => decideReceive(s, received), ctx, []);
    }
    return platform.acknowledgement(connector, inbound);
  }
}
