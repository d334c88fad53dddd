import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { WebhookGate } from '@lib/connectors';
import { AuthFailures, consumeOr429, rateLimited } from './auth-failures';

const WHAT_FAILED = 'failed authentications from this address';

/**
 * Limits on connector webhooks (public routes: the platform's signature or token is their credential,
 * docs/connectors.md). A delivery that fails its platform's authentication, or names no connector, counts as a
 * failed authentication of its address (AUTH_FAILURES_PER_MINUTE, shared with API keys, tokens and client secrets),
 * and past the limit the address gets 429 unless this connector already authenticated from it. Authenticated
 * deliveries count per connector (RATE_LIMIT_PER_CONNECTOR_PER_MINUTE): 429 past it, with nothing stored.
 */
export class WebhookLimits {
  constructor(
    private readonly perConnector: RateLimiterAbstract,
    private readonly failures: AuthFailures,
  ) {}

  /** The gate for one delivery from `address` to connector `connectorId`. */
  async gate(address: string, connectorId: string): Promise<WebhookGate> {
    const blocked = await this.failures.blockedFor(address);
    return async (authenticated) => {
      if (!authenticated) {
        if (blocked) throw rateLimited(blocked, WHAT_FAILED);
        await this.failures.failed(address);
        return;
      }
      this.failures.admit(address, `connector:${connectorId}`, blocked, WHAT_FAILED);
      await consumeOr429(this.perConnector, connectorId, 'deliveries to this connector');
    };
  }
}
