import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AddressClass, classifyAddress, embeddedIpv4 } from './ip-address';

/** Which outside addresses the service may call (docs/security.md, "Outbound calls"). */
export interface OutboundPolicyConfig {
  /** OUTBOUND_ALLOW_PRIVATE: loopback and private networks (RFC 1918, CGNAT, unique-local IPv6) are allowed. */
  readonly allowPrivate: boolean;
  /** OUTBOUND_ALLOWED_HOSTS: entries allowed whatever their address class (`host`, `host:port`, IP, `IP:port`, CIDR, `*.domain`). */
  readonly allowedHosts: readonly string[];
  /** OUTBOUND_DENIED_HOSTS: entries refused even when public or allowed above. */
  readonly deniedHosts: readonly string[];
  /** The settings that allow more for this policy's purpose, named in its refusals (default: the models' ones). */
  readonly settings?: OutboundSettingNames;
}

/**
 * What the calls leaving the service are for: each purpose has its own allow settings, so an entry that lets the
 * service reach a local model does not let an agent's `web_get` or a pipeline reach it too (docs/security.md).
 * `models`: registered models, encoders, rerankers, scorers. `tools`: agent tools (`web_get`, `web_search`, MCP tool
 * servers) and connectors' platform calls. `pipelines`: pipeline sources. `webhooks`: webhook deliveries.
 */
export type OutboundPurpose = 'models' | 'tools' | 'pipelines' | 'webhooks';

export interface OutboundSettingNames {
  readonly allowedHosts: string;
  readonly allowPrivate: string;
}

export const OUTBOUND_SETTINGS: Readonly<Record<OutboundPurpose, OutboundSettingNames>> = {
  models: { allowedHosts: 'OUTBOUND_ALLOWED_HOSTS', allowPrivate: 'OUTBOUND_ALLOW_PRIVATE' },
  tools: { allowedHosts: 'OUTBOUND_TOOLS_ALLOWED_HOSTS', allowPrivate: 'OUTBOUND_TOOLS_ALLOW_PRIVATE' },
  pipelines: { allowedHosts: 'OUTBOUND_PIPELINES_ALLOWED_HOSTS', allowPrivate: 'OUTBOUND_PIPELINES_ALLOW_PRIVATE' },
  webhooks: { allowedHosts: 'OUTBOUND_WEBHOOKS_ALLOWED_HOSTS', allowPrivate: 'OUTBOUND_WEBHOOKS_ALLOW_PRIVATE' },
};

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicyConfig = { allowPrivate: false, allowedHosts: [], deniedHosts: [] };

/** A target the policy refuses; `reason` says why, the message names the settings that change it. */
export class OutboundRefused extends Error {
  readonly code = 'outbound.refused';
  constructor(
    /** `host:port` as the URL names it, with the address it resolved to when that was the reason. */
    readonly target: string,
    readonly reason: string,
    settings: OutboundSettingNames = OUTBOUND_SETTINGS.models,
  ) {
    super(`${target} is not allowed by the outbound policy (${reason}); an administrator can allow it with ${settings.allowedHosts}${reason.includes('loopback') || reason.includes('private') ? ` or ${settings.allowPrivate}=true` : ''}`);
    this.name = 'OutboundRefused';
  }
}

/** The refusal somewhere in an error's cause chain (fetch and the SDKs wrap it), if any. */
export function outboundRefusal(e: unknown): OutboundRefused | undefined {
  let at: unknown = e;
  for (let depth = 0; at && depth < 6; depth++, at = (at as { cause?: unknown }).cause) {
    if (at instanceof OutboundRefused) return at;
  }
  return undefined;
}

interface Entry {
  readonly text: string;
  readonly port?: number;
  readonly host?: string;
  readonly suffix?: string;
  readonly addresses?: BlockList;
}

/** Parses one allow or deny entry; throws with a readable message on a malformed one. */
export function parseHostEntry(raw: string): Entry {
  const text = raw.trim().toLowerCase();
  let body = text;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(body);
  if (bracketed) [body, port] = [bracketed[1], bracketed[2] ? Number(bracketed[2]) : undefined];
  else if (!isIP(body) && !body.includes('/') && /^[^:]+:\d+$/.test(body)) [body, port] = [body.split(':')[0], Number(body.split(':')[1])];
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`"${raw}": port must be 1 to 65535`);
  const cidr = /^(.+)\/(\d{1,3})$/.exec(body);
  if (cidr || isIP(body)) {
    const address = cidr ? cidr[1] : body;
    const family = isIP(address);
    const prefix = cidr ? Number(cidr[2]) : family === 4 ? 32 : 128;
    if (family === 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`"${raw}" is not an IP address or CIDR range`);
    const addresses = new BlockList();
    addresses.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return { text, port, addresses };
  }
  if (body.startsWith('*.') && /^[a-z0-9.-]+$/.test(body.slice(2))) return { text, port, suffix: body.slice(1) };
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(body)) throw new Error(`"${raw}" is not a host name, host:port, IP address or CIDR range`);
  return { text, port, host: body.replace(/\.$/, '') };
}

const ALLOWED_WITH_PRIVATE: readonly AddressClass[] = ['public', 'loopback', 'private'];
const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/**
 * Decides whether the service may connect to a host, a port and the address it resolved to. Deny entries win,
 * then allow entries, then the address class: public addresses are allowed; loopback and private ones only
 * with `allowPrivate`; link-local (the metadata service), unspecified, multicast and reserved ones only
 * through an allow entry. IPv6 forms that carry an IPv4 address are judged by that address.
 */
export class OutboundPolicy {
  private readonly allowed: readonly Entry[];
  private readonly denied: readonly Entry[];

  constructor(readonly config: OutboundPolicyConfig = DEFAULT_OUTBOUND_POLICY) {
    this.allowed = config.allowedHosts.map(parseHostEntry);
    this.denied = config.deniedHosts.map(parseHostEntry);
  }

  /** A refusal that names the settings of this policy's purpose. */
  refusal(target: string, reason: string): OutboundRefused {
    return new OutboundRefused(target, reason, this.config.settings);
  }

  /**
   * Checks what a URL alone tells: its scheme, its host name against the entries, an IP literal's class.
   * A host name still has to be resolved: `checkAddress` judges each address at connect time.
   */
  checkUrl(url: string | URL): OutboundRefused | undefined {
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return this.refusal(String(url), 'not an absolute URL');
    }
    const port = Number(parsed.port) || DEFAULT_PORTS[parsed.protocol];
    const target = `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}`;
    if (!DEFAULT_PORTS[parsed.protocol]) return this.refusal(target || parsed.href, `scheme ${parsed.protocol} is not http or https`);
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    return isIP(host) ? this.checkAddress(host, port, host) : this.checkName(host, port);
  }

  /** Checks a host name before it is resolved: only deny entries can refuse it here. */
  checkName(hostname: string, port: number): OutboundRefused | undefined {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    if (this.denied.some((e) => this.nameMatches(e, host, port))) return this.refusal(`${host}:${port}`, 'denied by OUTBOUND_DENIED_HOSTS');
    return undefined;
  }

  /** Checks the address a connection to `hostname:port` is about to use. */
  checkAddress(hostname: string, port: number, address: string): OutboundRefused | undefined {
    const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    const target = host === address ? `${isIP(host) === 6 ? `[${host}]` : host}:${port}` : `${host}:${port} (${address})`;
    const matches = (e: Entry) => this.nameMatches(e, host, port) || this.addressMatches(e, address, port);
    if (this.denied.some(matches)) return this.refusal(target, 'denied by OUTBOUND_DENIED_HOSTS');
    if (this.allowed.some(matches)) return undefined;
    const kind = classifyAddress(address);
    if (kind === undefined) return this.refusal(target, 'not an IP address');
    if (kind === 'public' || (this.config.allowPrivate && ALLOWED_WITH_PRIVATE.includes(kind))) return undefined;
    return this.refusal(target, `${kind} address`);
  }

  /**
   * Checks a URL and every address its host resolves to now (for registrations, which should fail at once
   * rather than at first use). A name that does not resolve is not refused here: the connection will say so.
   */
  async checkResolved(url: string, lookup: (host: string) => Promise<readonly { address: string }[]> = defaultLookup): Promise<OutboundRefused | undefined> {
    const early = this.checkUrl(url);
    if (early) return early;
    const parsed = new URL(url);
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) return undefined;
    const addresses = await lookup(host).catch(() => []);
    const port = Number(parsed.port) || DEFAULT_PORTS[parsed.protocol];
    for (const { address } of addresses) {
      const refused = this.checkAddress(host, port, address);
      if (refused) return refused;
    }
    return undefined;
  }

  private nameMatches(entry: Entry, host: string, port: number): boolean {
    if (entry.port !== undefined && entry.port !== port) return false;
    if (entry.host !== undefined) return entry.host === host;
    if (entry.suffix !== undefined) return host.endsWith(entry.suffix);
    return false;
  }

  private addressMatches(entry: Entry, address: string, port: number): boolean {
    if (!entry.addresses || (entry.port !== undefined && entry.port !== port)) return false;
    const bare = address.split('%')[0];
    const family = isIP(bare);
    if (family === 0) return false;
    if (entry.addresses.check(bare, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const inner = family === 6 ? embeddedIpv4(bare) : undefined;
    return inner !== undefined && entry.addresses.check(inner, 'ipv4');
  }
}

async function defaultLookup(host: string): Promise<readonly { address: string }[]> {
  // A slow resolver must not hold a registration: past 3 s the connection's own check decides.
  const timeout = new Promise<[]>((resolve) => setTimeout(() => resolve([]), 3000).unref());
  return Promise.race([dnsLookup(host, { all: true, verbatim: true }), timeout]);
}

/**
 * Reads one purpose's policy from the environment (`OUTBOUND_DENIED_HOSTS` is every purpose's); problems are
 * returned, to be reported with the others.
 */
export function outboundPolicyFromEnv(env: Readonly<Record<string, string | undefined>>, purpose: OutboundPurpose = 'models'): { config: OutboundPolicyConfig; problems: string[] } {
  const problems: string[] = [];
  const settings = OUTBOUND_SETTINGS[purpose];
  const list = (name: string): string[] => {
    const entries = (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    for (const entry of entries) {
      try {
        parseHostEntry(entry);
      } catch (e) {
        problems.push(`${name}: ${(e as Error).message}`);
      }
    }
    return entries;
  };
  const flag = (env[settings.allowPrivate] ?? '').trim().toLowerCase();
  if (!['', 'true', 'false', '1', '0'].includes(flag)) problems.push(`${settings.allowPrivate} must be true or false, got "${env[settings.allowPrivate]}"`);
  const denied = purpose === 'models' ? list('OUTBOUND_DENIED_HOSTS') : (env.OUTBOUND_DENIED_HOSTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return { config: { allowPrivate: flag === 'true' || flag === '1', allowedHosts: list(settings.allowedHosts), deniedHosts: denied, ...(purpose === 'models' ? {} : { settings }) }, problems };
}
