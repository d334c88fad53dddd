import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, Dispatcher, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { traceHeaders } from '../telemetry/tracing';
import { OutboundPolicy } from './outbound-policy';

export type AddressLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemLookup: AddressLookup = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (e, addresses) => (e ? reject(e) : resolve(addresses))));

export interface OutboundHttpOptions {
  /** Resolves host names (tests give a fake one to play DNS rebinding). */
  readonly lookup?: AddressLookup;
  /**
   * undici's header and body timeouts (ms, 0 = none). Off by default: model calls run their own idle timers
   * (docs/llms.md), and Node's fetch would cut any wait at 300 s.
   */
  readonly headersTimeoutMs?: number;
  readonly bodyTimeoutMs?: number;
}

/**
 * The one HTTP client for calls leaving the service (models, encoders, rerankers, scorers; later web tools).
 * Every connection, the first and each one a redirect opens, resolves its host itself and connects to an
 * address the policy allows, so neither a redirect nor a DNS answer that changed since a check (rebinding)
 * can reach a refused address. A refusal fails the request with an `OutboundRefused` in its cause chain.
 */
export class OutboundHttp {
  readonly dispatcher: Agent;
  /** A `fetch` for SDKs and plain calls, sent through the guarded dispatcher. */
  readonly fetch: typeof fetch;

  constructor(
    readonly policy: OutboundPolicy,
    options: OutboundHttpOptions = {},
  ) {
    const lookup = options.lookup ?? systemLookup;
    const base = buildConnector({});
    const connect: buildConnector.connector = (opts, callback) => {
      const protocol = opts.protocol;
      const port = Number(opts.port) || (protocol === 'https:' ? 443 : 80);
      const hostname = opts.hostname.replace(/^\[(.*)\]$/, '$1');
      if (protocol !== 'http:' && protocol !== 'https:') return callback(this.policy.refusal(`${hostname}:${port}`, `scheme ${protocol} is not http or https`), null);
      const refusedName = isIP(hostname) ? undefined : this.policy.checkName(hostname, port);
      if (refusedName) return callback(refusedName, null);
      const resolved = isIP(hostname) ? Promise.resolve([{ address: hostname, family: isIP(hostname) }]) : lookup(hostname);
      resolved.then(
        (addresses) => {
          // Every address must pass: the connection may use any of them.
          for (const { address } of addresses) {
            const refused = this.policy.checkAddress(hostname, port, address);
            if (refused) return callback(refused, null);
          }
          if (addresses.length === 0) return callback(new Error(`getaddrinfo ENOTFOUND ${hostname}`), null);
          // Connect to the checked address; TLS still verifies the certificate against the host name.
          const servername = opts.servername || (isIP(hostname) ? undefined : hostname);
          base({ ...opts, hostname: addresses[0].address, ...(servername ? { servername } : {}) }, callback);
        },
        (e: Error) => callback(e, null),
      );
    };
    this.dispatcher = new Agent({ connect, headersTimeout: options.headersTimeoutMs ?? 0, bodyTimeout: options.bodyTimeoutMs ?? 0 });
    const dispatcher = this.dispatcher;
    this.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as { url: string }).url;
      const refused = this.policy.checkUrl(url);
      if (refused) return Promise.reject(new TypeError('fetch failed', { cause: refused }));
      return undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(withTrace(input, init) as Parameters<typeof undiciFetch>[1]), dispatcher });
    }) as unknown as typeof fetch;
  }

  /**
   * undici's `request` through the guarded dispatcher, for hot paths where `fetch`'s WHATWG layers (Request and
   * Headers objects, web streams) cost more than the call itself: ~0.2 ms a call against ~0.35 for `fetch`
   * (docs/llms.md). Redirects are followed as `fetch` follows them (up to 20), each connection checked the same way.
   */
  request(url: string, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>): Promise<Dispatcher.ResponseData> {
    const refused = this.policy.checkUrl(url);
    if (refused) return Promise.reject(new TypeError('request refused', { cause: refused }));
    const trace = traceHeaders();
    return undiciRequest(url, { maxRedirections: 20, ...options, ...(trace ? { headers: withTraceHeaders(options.headers, trace) } : {}), dispatcher: this.dispatcher });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/**
 * The call's init with the active span's `traceparent` (and `tracestate`) added, when tracing is on: every model,
 * tool, MCP and webhook call goes through this client, so they all carry it (docs/telemetry.md). A header the
 * caller set itself is kept.
 */
function withTrace(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): RequestInit | undefined {
  const trace = traceHeaders();
  if (!trace) return init;
  const headers = new Headers(init?.headers ?? (typeof input === 'object' && !(input instanceof URL) ? input.headers : undefined));
  for (const [name, value] of Object.entries(trace)) if (!headers.has(name)) headers.set(name, value);
  return { ...init, headers };
}

function withTraceHeaders(headers: Dispatcher.RequestOptions['headers'], trace: Record<string, string>): Dispatcher.RequestOptions['headers'] {
  if (!headers) return trace;
  if (Array.isArray(headers)) {
    // undici's flat form: name, value, name, value…
    const flat = headers as string[];
    const has = new Set(flat.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
    return [...flat, ...Object.entries(trace).filter(([n]) => !has.has(n)).flat()];
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const pairs = [...(headers as Iterable<[string, string | string[] | undefined]>)];
    const has = new Set(pairs.map(([n]) => n.toLowerCase()));
    return [...pairs, ...Object.entries(trace).filter(([n]) => !has.has(n))];
  }
  const has = new Set(Object.keys(headers).map((n) => n.toLowerCase()));
  return { ...Object.fromEntries(Object.entries(trace).filter(([n]) => !has.has(n))), ...(headers as Record<string, string>) };
}

/** Injection token of the service's `OutboundHttp` for models, encoders, rerankers and scorers (OUTBOUND_ALLOWED_HOSTS). */
export const OUTBOUND_HTTP = Symbol('OutboundHttp');
/** Injection token of the `OutboundHttp` of agent tools and connectors (OUTBOUND_TOOLS_ALLOWED_HOSTS). */
export const TOOLS_OUTBOUND_HTTP = Symbol('ToolsOutboundHttp');
/** Injection token of the `OutboundHttp` of pipeline sources (OUTBOUND_PIPELINES_ALLOWED_HOSTS). */
export const PIPELINES_OUTBOUND_HTTP = Symbol('PipelinesOutboundHttp');
