import { Inject, Injectable } from '@nestjs/common';
import { TOOLS_OUTBOUND_HTTP, OutboundHttp, outboundRefusal, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });
const DEFAULT_TAVILY = 'https://api.tavily.com';

/**
 * Web search through the configured provider (the reference's only one, Tavily: `TAVILY_API_KEY`, and
 * `TAVILY_URL` for a proxy or a test), through the guarded client. Without a key the tool says it is not
 * configured; the key never reaches an event or a response.
 */
@Injectable()
export class WebSearchTool implements Tool {
  constructor(
    @Inject(TOOLS_OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Searches the web and returns the most relevant pages with a snippet of each.',
        parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const key = this.config.env.TAVILY_API_KEY;
    if (!key) return err('web search is not configured on this service (TAVILY_API_KEY)');
    if (typeof args.query !== 'string' || !args.query.trim()) return err('query must be a non-empty string');
    if (args.provider !== undefined && args.provider !== 'tavily') return err('provider must be tavily');
    const limit = Math.min(20, Math.max(1, Math.trunc(Number(args.limit ?? 5)) || 5));
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string') : []);
    let res: Response;
    try {
      res = await this.outbound.fetch(`${(this.config.env.TAVILY_URL ?? DEFAULT_TAVILY).replace(/\/+$/, '')}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: args.query, max_results: limit, include_domains: list(args.include_domains), exclude_domains: list(args.exclude_domains) }),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(30_000)]),
      });
    } catch (e) {
      const refused = outboundRefusal(e);
      return err(refused ? `refused: ${refused.message}` : 'the search provider could not be reached');
    }
    if (!res.ok) return err(`the search provider answered ${res.status}`);
    const body = (await res.json().catch(() => ({}))) as { results?: { title?: string; url?: string; content?: string; score?: number }[] };
    return { output: { query: args.query, results: (body.results ?? []).slice(0, limit).map((r) => ({ title: r.title ?? '', url: r.url ?? '', snippet: r.content ?? '', ...(typeof r.score === 'number' ? { score: r.score } : {}) })) }, error: false };
  }
}
