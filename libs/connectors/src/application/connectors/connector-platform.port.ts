import type { ConnectorSettings, ConnectorType } from '../../domain/connector';

/** A connector as the webhook and the replier use it: its settings and every credential in clear. */
export interface LiveConnector {
  readonly agentId: string;
  readonly agentKey: string;
  readonly connectorId: string;
  readonly settings: ConnectorSettings;
  readonly credentials: Readonly<Record<string, string>>;
}

/** Where each platform's API is, and how replies are retried (read from the environment: docs/connectors.md). */
export interface ConnectorPlatformSettings {
  /** SLACK_API_URL (default https://slack.com/api): `chat.postMessage` is called under it. */
  readonly slackApiUrl: string;
  /** GOOGLE_CHAT_API_URL (default https://chat.googleapis.com): `spaces.messages.create` under it. */
  readonly gchatApiUrl: string;
  /** GOOGLE_CHAT_JWKS_URL and GOOGLE_CHAT_ISSUER: who signs Google Chat's bearer tokens (Google's OIDC keys). */
  readonly gchatJwksUrl: string;
  readonly gchatIssuer: string;
  /** CONNECTOR_RETRY_BASE_MS (default 2000): the first retry's delay, doubled for each further one. */
  readonly retryBaseMs: number;
  /** CONNECTOR_MAX_CONCURRENT_REPLIES (default 16): turns and posts one worker runs at once; the rest wait in order. */
  readonly maxConcurrentReplies: number;
}

export function connectorPlatformSettings(env: Readonly<Record<string, string | undefined>>): ConnectorPlatformSettings {
  const retry = Number(env.CONNECTOR_RETRY_BASE_MS ?? 2000);
  const concurrent = Number(env.CONNECTOR_MAX_CONCURRENT_REPLIES ?? 16);
  return {
    slackApiUrl: (env.SLACK_API_URL ?? 'https://slack.com/api').replace(/\/+$/, ''),
    gchatApiUrl: (env.GOOGLE_CHAT_API_URL ?? 'https://chat.googleapis.com').replace(/\/+$/, ''),
    gchatJwksUrl: env.GOOGLE_CHAT_JWKS_URL ?? 'https://www.googleapis.com/oauth2/v3/certs',
    gchatIssuer: env.GOOGLE_CHAT_ISSUER ?? 'https://accounts.google.com',
    retryBaseMs: Number.isFinite(retry) && retry >= 10 ? retry : 2000,
    maxConcurrentReplies: Number.isInteger(concurrent) && concurrent >= 1 && concurrent <= 1024 ? concurrent : 16,
  };
}

/** An inbound webhook request as the platform sent it: the raw bytes are what signatures cover. */
export interface InboundRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody: Buffer;
  readonly body: unknown;
  readonly now: Date;
}

/** What a verified delivery asks for. */
export type Inbound =
  /** Answered at once (Slack's URL verification challenge). */
  | { readonly kind: 'respond'; readonly body: unknown }
  /** Not a message for the agent (a bot's own message, a space join…): acknowledged, nothing stored. */
  | { readonly kind: 'ignore' }
  | {
      readonly kind: 'message';
      readonly deliveryId: string;
      /** The channel's conversation (a thread, an engagement): one agent session. */
      readonly conversation: string;
      readonly text: string;
      readonly replyTo: Readonly<Record<string, string>>;
      /** A thread reply without a mention: answered only in a conversation the agent is already in. */
      readonly onlyInKnownConversation?: boolean;
    };

/** One platform: how it authenticates deliveries, what they mean, how it is acknowledged and answered. */
export interface ConnectorPlatform {
  /** False: the request is not from the platform (401, nothing stored). */
  verify(connector: LiveConnector, req: InboundRequest): Promise<boolean>;
  /** Throws a DomainError (400) naming what is missing. */
  parse(connector: LiveConnector, req: InboundRequest): Inbound;
  /** The answer within the platform's 3 seconds, before the agent has run. */
  acknowledgement(connector: LiveConnector, inbound: Inbound): unknown;
  /** Posts the answer; throws with a reason the reply's failure event records. */
  reply(connector: LiveConnector, replyTo: Readonly<Record<string, string>>, text: string): Promise<void>;
}

/** The platforms of this process, one per connector type (built once, on the guarded outbound client). */
export interface ConnectorPlatformSet {
  readonly settings: ConnectorPlatformSettings;
  of(type: ConnectorType): ConnectorPlatform;
}
export const CONNECTOR_PLATFORMS = Symbol('ConnectorPlatforms');
