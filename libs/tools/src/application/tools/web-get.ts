import { Inject, Injectable } from '@nestjs/common';
import { TOOLS_OUTBOUND_HTTP, OutboundHttp, outboundRefusal, readUpTo } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';
import { originOf, secretOriginsOf, secretRefsOf } from './secret-destinations';

export const WEB_GET_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
/** The spec's bounds of a request body the tool sends (`max_body_bytes`). */
export const MAX_BODY_BYTES = { min: 1024, max: 4_194_304, default: 65_536 } as const;
const DEFAULT_MAX_CONTENT = 1_048_576;
const MAX_CONTENT = 10_485_760;
const DEFAULT_TIMEOUT_S = 30;
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const TEXTUAL = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|[a-z0-9.+-]*\+(json|xml)))/i;

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/**
 * Fetches a URL for the model through the service's guarded client: every connection, redirect and resolved
 * address must pass the outbound policy (docs/security.md, docs/tools.md).
 */
@Injectable()
export class WebGetTool implements Tool {
  constructor(@Inject(TOOLS_OUTBOUND_HTTP) private readonly outbound: OutboundHttp) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Fetches a web page or calls an HTTP API and returns the response status, headers and content.',
        parameters: {
          type: 'object',
          properties: {
            url: { type: 'string', description: 'Absolute http or https URL' },
            method: { type: 'string', enum: [...WEB_GET_METHODS] },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
            body: { type: 'string', description: 'Request body for POST, PUT and PATCH' },
          },
          required: ['url'],
        },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    let url: URL;
    try {
      url = new URL(String(args.url));
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      return err('URL must be an absolute HTTP or HTTPS URL');
    }
    const method = String(args.method ?? 'GET').toUpperCase();
    if (!(WEB_GET_METHODS as readonly string[]).includes(method)) return err(`method must be one of ${WEB_GET_METHODS.join(', ')}`);
    const headers = args.headers ?? {};
    if (headers === null || typeof headers !== 'object' || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== 'string')) return err('headers must be an object of strings');
    const body = args.body === undefined || args.body === null ? undefined : typeof args.body === 'string' ? args.body : JSON.stringify(args.body);
    const maxBody = Number(config.max_body_bytes ?? MAX_BODY_BYTES.default);
    // Checked before anything is sent (spec: rule 5).
    if (body !== undefined && Buffer.byteLength(body) > maxBody) return err(`the request body has ${Buffer.byteLength(body)} bytes, over max_body_bytes (${maxBody}): nothing was sent`);
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) return err(`a ${method} request has no body`);
    const maxContent = Math.min(MAX_CONTENT, Math.max(1, Number(args.max_content_bytes ?? DEFAULT_MAX_CONTENT)));
    const timeout = AbortSignal.timeout(Math.min(3600, Math.max(1, Number(args.timeout_seconds ?? DEFAULT_TIMEOUT_S))) * 1000);
    // A call whose configuration puts secrets into it goes only where the configuration sends them (docs/tools.md).
    const secrets = secretRefsOf(config);
    const origins = secretOriginsOf(config, ctx.refs);
    if (secrets.length && !origins.has(url.origin)) {
      const where = origins.size ? `only to ${[...origins].join(', ')}` : 'nowhere: its configuration fixes no url and lists no secret_origins';
      return err(`refused: this tool's configuration puts secrets into the call (${secrets.join(', ')}), which it sends ${where}; ${url.origin} is not one of them. Nothing was sent`);
    }
    const init = { method, headers: headers as Record<string, string>, body, signal: AbortSignal.any([ctx.signal, timeout]) };
    const follow = args.follow_redirects !== false;
    let res: Response;
    let finalUrl: string;
    let note: string | undefined;
    try {
      if (secrets.length && follow) ({ res, url: finalUrl, note } = await this.followBound(url, init, origins));
      else {
        res = await this.outbound.fetch(url, { ...init, redirect: follow ? 'follow' : 'manual' });
        finalUrl = res.url || url.href;
      }
    } catch (e) {
      const refused = outboundRefusal(e);
      if (refused) return err(`refused: ${refused.message}`);
      if (timeout.aborted) return err('the request timed out');
      return err(`the request failed: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`);
    }
    const { bytes, truncated } = await readUpTo(res, maxContent);
    const type = res.headers.get('content-type') ?? '';
    let content = TEXTUAL.test(type) || type === '' ? bytes.toString('utf8') : undefined;
    if (content !== undefined) content = cutLines(content, args.head_lines, args.tail_lines);
    return {
      output: {
        status: res.status,
        url: finalUrl,
        content_type: type,
        ...(content !== undefined ? { content } : { content_base64: bytes.toString('base64') }),
        ...(truncated ? { truncated: true, note: `the response was cut at ${maxContent} bytes` } : {}),
        ...(note ? { redirect_note: note } : {}),
      },
      error: res.status >= 400,
    };
  }

  /**
   * Follows redirects of a call that carries secrets, one hop at a time: a hop that stays within the secrets'
   * origins is sent as it was; one that leaves them is sent without any of the call's headers (after an
   * `input_transform` any header may hold a secret, not only `Authorization`), and one that would re-send the
   * body there (307, 308) is not followed: the redirect itself is the answer.
   */
  private async followBound(start: URL, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }, origins: ReadonlySet<string>): Promise<{ res: Response; url: string; note?: string }> {
    let at = start;
    let { method, headers, body } = init;
    for (let hop = 0; ; hop++) {
      const res = await this.outbound.fetch(at, { method, headers, body, signal: init.signal, redirect: 'manual' });
      const location = res.headers.get('location');
      if (!REDIRECTS.has(res.status) || !location) return { res, url: at.href };
      if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects`) });
      let next: URL;
      try {
        next = new URL(location, at);
      } catch {
        return { res, url: at.href };
      }
      const nextOrigin = originOf(next);
      if (!nextOrigin) return { res, url: at.href };
      // As fetch does: 303 (but HEAD), and 301/302 after a POST, become a GET without a body.
      if ((res.status === 303 && method !== 'HEAD') || ((res.status === 301 || res.status === 302) && method === 'POST')) [method, body] = ['GET', undefined];
      if (!origins.has(nextOrigin)) {
        if (body !== undefined) return { res, url: at.href, note: `not followed: the redirect to ${nextOrigin} would re-send the request body, which may carry this call's secrets` };
        headers = {};
      }
      await res.body?.cancel().catch(() => undefined);
      at = next;
    }
  }
}

function cutLines(text: string, head: unknown, tail: unknown): string {
  const h = Number(head);
  const t = Number(tail);
  if (!(h > 0) && !(t > 0)) return text;
  const lines = text.split('\n');
  const start = h > 0 ? lines.slice(0, h) : [];
  const end = t > 0 ? lines.slice(-t) : [];
  return [...start, ...(start.length + end.length < lines.length ? ['…'] : []), ...end].join('\n');
}
