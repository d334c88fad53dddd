/** What an attempt got back: the status code, or no answer (refused, unreachable, timed out) with the reason. */
export type SendResult = { readonly statusCode: number } | { readonly statusCode: null; readonly error: string };

/**
 * Sends one signed delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`) through
 * the service's outbound policy for webhooks. Bound in WebhooksModule to the adapter over the guarded client.
 */
export abstract class WebhookSender {
  /** Why the policy refuses `url` now (its host resolved), or undefined: registrations fail at once, not at first use. */
  abstract refusal(url: string): Promise<string | undefined>;
  /** One attempt; never throws for what the receiver or the network did, only for a bug. */
  abstract send(request: { readonly url: string; readonly secret: string; readonly messageId: string; readonly body: string; readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<SendResult>;
}
