import { invalid, OutboundPolicy } from '@lib/platform';
import { LlmAuth, parseServiceAccountKey } from '../domain/auth';

/**
 * Refuses, at registration and discovery, a model whose endpoints the outbound policy refuses (the uri, an
 * OAuth token endpoint, a service-account key's `token_uri`), by host literal or by what the name resolves to
 * now. The guarded client checks again at every connection: this check only makes the refusal early and clear.
 */
export async function checkOutboundTargets(policy: OutboundPolicy, target: { readonly uri?: string; readonly auth?: LlmAuth | null }): Promise<void> {
  const urls: [field: string, url: string][] = [];
  if (target.uri) urls.push(['uri', target.uri]);
  const auth = target.auth;
  if (auth?.type === 'oauth_client_credentials') urls.push(['auth.token_endpoint', auth.token_endpoint]);
  if (auth && 'key_json' in auth) {
    const tokenUri = parseServiceAccountKey(auth.key_json)?.token_uri;
    if (tokenUri) urls.push(['auth.key_json', tokenUri]);
  }
  const problems: Record<string, string> = {};
  for (const [field, url] of urls) {
    // A malformed URL or another scheme is the domain validation's to report, with its own message.
    if (!/^https?:\/\/[^/]/i.test(url)) continue;
    const refused = await policy.checkResolved(url);
    if (refused) problems[field] = refused.message;
  }
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.outbound_refused', `Invalid ${first[0]}: ${first[1]}`, problems);
}
