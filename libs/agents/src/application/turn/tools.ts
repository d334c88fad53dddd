import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { QueryCorpora, QueryResponse } from '@lib/retrieval';
import { CommandContext, DomainError, READ_STORE, ReadStore } from '@lib/platform';
import { storeImage, storeTable } from '../tools/document-attachments';
import type { ToolConfig } from '../../domain/agent-config';
import type { AgentRuns } from '../runs/agent-runs.port';
import type { ActiveSession } from '../../domain/session';
import type { SessionArtifactRecord } from '../../domain/session-events';

/** A function the model may call, in OpenAI's tool shape. */
export interface ToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description: string; readonly parameters: Record<string, unknown> };
}

/** What a tool call runs with: the session's values for `$ref`s, who the agent acts as, and the turn's abort signal. */
export interface ToolContext {
  readonly agentKey: string;
  readonly sessionKey: string;
  /** The session as the turn knows it (its artifacts, for the artifact tools); absent while one is being created. */
  readonly session?: ActiveSession;
  readonly now: Date;
  readonly signal: AbortSignal;
  /** Whether the agent's identity may read a corpus (its tools act with the identity's permissions, not the caller's). */
  readonly canReadCorpus: (corpusKey: string) => Promise<boolean>;
  /** Whether the agent's identity may write a corpus (the document-index tool). */
  readonly canWriteCorpus?: (corpusKey: string) => Promise<boolean>;
  /** Whether the agent's identity may use another agent (the sub_agent tool). */
  readonly canUseAgent?: (agentKey: string) => Promise<boolean>;
  /** The call being run, and where its activity goes (a streaming caller's `tool_activity` events). */
  readonly toolCallId?: string;
  readonly toolConfigurationName?: string;
  readonly activity?: (event: Record<string, unknown>) => void;
  /** The request the turn serves (a sub-agent's input is made on its behalf). */
  readonly command?: CommandContext;
  /** The session's artifacts as they are now (after this turn's earlier writes). */
  readonly artifactsNow?: () => readonly SessionArtifactRecord[];
  /** Whether the agent's model takes images, and how an image artifact is put before it (`image_read`). */
  readonly modelTakesImages?: boolean;
  readonly recordImageRead?: (artifactId: string, detail: 'auto' | 'low' | 'high') => Promise<void>;
  /** Stores bytes as a session artifact (`artifactId` given: a new version of that artifact) and records it. */
  readonly storeArtifact?: (file: { readonly artifactId?: string; readonly filename: string; readonly mimeType: string; readonly bytes: Buffer; readonly metadata: Record<string, unknown> }) => Promise<string>;
  /** What `$ref`s resolve against: a lambda's composed tools resolve theirs against the hosting agent and session. */
  readonly refs?: RefSources;
  /** How deep in lambdas calling lambdas this call is (0 or absent: called by the model or enrichment). */
  readonly lambdaDepth?: number;
  /** Runs other agents (the sub_agent tool): given by the turn, absent where no agent may be used. */
  readonly runs?: AgentRuns;
  /** Calls another configured tool as a turn calls one (transforms, time limit): a lambda's composed tools. */
  readonly callTool?: ToolCall;
}

/** One call of a configured tool by the name it is configured under (`ToolCaller.call`). */
export type ToolCall = (tool: ToolConfig, name: string, args: Record<string, unknown>, ctx: ToolContext, transformContext: Record<string, unknown>) => Promise<ToolResult>;

/** How deep a turn is in sub-agent calls (0: a caller's input), kept beside its command context. */
export const SUB_AGENT_DEPTH = new WeakMap<CommandContext, number>();

export type ToolResult = { readonly output: Record<string, unknown>; readonly error: boolean };

/**
 * The tool port: how a configured tool is shown to the model and run. Client tools are not run here (the
 * turn waits for the caller's `tool_output`). The tools issue adds the other types behind this port.
 */
export interface Tool {
  definition(name: string, config: ToolConfig): ToolDefinition;
  run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * The tools the service runs, by configuration `type`: the tools issue adds its types here. Client tools are
 * not in it (the caller runs them).
 */
export const AGENT_TOOLS = Symbol('AgentTools');
export type ToolRegistry = ReadonlyMap<string, Tool>;

const OPEN_OBJECT = { type: 'object', properties: {}, additionalProperties: true };

/** The RAG tool: the configuration fixes the search; the model supplies the query. */
@Injectable()
export class CorporaSearchTool implements Tool {
  constructor(
    private readonly queries: QueryBus,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    const corpora = corporaOf(config).map((c) => c.corpus_key).join(', ');
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? `Searches the corpora ${corpora} and returns the most relevant passages for a query.`,
        parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for, in natural language' } }, required: ['query'] },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const query = args.query;
    if (typeof query !== 'string' || !query.trim()) return { output: { error: 'query must be a non-empty string' }, error: true };
    if (query.length > 5000) return { output: { error: 'query is longer than 5000 characters' }, error: true };
    const search = (config.query_configuration?.search ?? {}) as { corpora?: CorpusSpec[]; limit?: number; offset?: number };
    const corpora = corporaOf(config);
    for (const c of corpora) {
      // A corpus the identity cannot read is reported as absent, as the API does to such a caller.
      if (!(await ctx.canReadCorpus(c.corpus_key))) return { output: { error: `corpus "${c.corpus_key}" does not exist or the agent's identity may not read it` }, error: true };
    }
    try {
      const dated = config.type === CORPORA_SEARCH_DATED;
      const response: QueryResponse = await this.queries.execute(
        new QueryCorpora(
          query,
          corpora.map((c, i) => ({ corpusKey: c.corpus_key, lexicalInterpolation: c.lexical_interpolation ?? 0.025, metadataFilter: c.metadata_filter, filterField: `query_configuration.search.corpora[${i}].metadata_filter` })),
          { limit: clamp(search.limit ?? 10, 1, 100), offset: clamp(search.offset ?? 0, 0, 1000) },
          ctx.now,
        ),
      );
      if (dated) return { output: { search_results: await this.withAttachments(response.search_results, ctx) }, error: false };
      return {
        output: {
          search_results: response.search_results.map((r) => ({ text: r.text, score: r.score, document_id: r.document_id, corpus_key: (r as { corpus_key?: string }).corpus_key, part_metadata: r.part_metadata, document_metadata: r.document_metadata })),
        },
        error: false,
      };
    } catch (e) {
      if (e instanceof DomainError) return { output: { error: e.message }, error: true };
      throw e;
    }
  }

  /**
   * The dated variant's results: a part cut from a table or an image says so (`result_type`, `table` or `image`)
   * and keeps the matched snippet as its text; the table itself is not inlined but resolved on demand as a
   * session artifact (JSON), an image likewise (for `image_read`), each once per document.
   */
  private async withAttachments(results: QueryResponse['search_results'], ctx: ToolContext): Promise<Record<string, unknown>[]> {
    const made = new Map<string, Promise<Record<string, unknown> | undefined>>();
    return Promise.all(
      results.map(async (r) => {
        const base = { text: r.text, score: r.score, document_id: r.document_id, corpus_key: r.corpus_key, part_metadata: r.part_metadata, document_metadata: r.document_metadata };
        // The query resolved which table or image each part was cut from (resultAttachments).
        if ((!r.table && !r.image) || !ctx.storeArtifact) return { ...base, result_type: 'text' };
        const key = `${r.corpus_key}\u0000${r.document_id}\u0000${r.table ? `table\u0000${r.table.id}` : `image\u0000${String(r.image!.id)}`}`;
        if (r.table) {
          const table = r.table;
          if (!made.has(key)) made.set(key, storeTable(ctx.storeArtifact, r.corpus_key, r.document_id, table));
          return { ...base, result_type: 'text', table: { ...(await made.get(key)!), ...(table.description ? { description: table.description } : {}) } };
        }
        const view = r.image!;
        const meta = { id: String(view.id), mimeType: String(view.mime_type), ...(typeof view.title === 'string' ? { title: view.title } : {}), ...(typeof view.caption === 'string' ? { caption: view.caption } : {}) };
        if (!made.has(key)) made.set(key, storeImage(ctx.storeArtifact, this.reads, r.corpus_key, r.document_id, meta));
        const image = await made.get(key)!;
        return image ? { ...base, result_type: 'image', image: { ...image, ...(typeof view.description === 'string' ? { description: view.description } : {}) } } : { ...base, result_type: 'text' };
      }),
    );
  }
}

/** The dated retrieval tool (`<family>_<YYYYMMDD>`, the spec's Versioning 2); plain `corpora_search` is unchanged. */
export const CORPORA_SEARCH_DATED = 'corpora_search_20260608';

interface CorpusSpec {
  readonly corpus_key: string;
  readonly metadata_filter?: string;
  readonly lexical_interpolation?: number;
}

const corporaOf = (config: ToolConfig): CorpusSpec[] => ((config.query_configuration?.search as { corpora?: CorpusSpec[] } | undefined)?.corpora ?? []);
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.trunc(Number(n) || 0)));

/**
 * A client tool is run by the caller: the model sees its schema, from the tool registered at `/v2/tools` when the
 * configuration names one by `tool_id` (attached as `client_tool`), else given inline (`parameters`).
 */
export function clientToolDefinition(name: string, config: ToolConfig): ToolDefinition {
  const registered = config.client_tool as { description?: string; input_schema?: Record<string, unknown> } | undefined;
  return { type: 'function', function: { name, description: config.description ?? registered?.description ?? `Asks the client to run ${name}.`, parameters: registered?.input_schema ?? config.parameters ?? OPEN_OBJECT } };
}

/** Values `{"$ref": "…"}` in `argument_override` resolve against: agent secrets, session secrets, session metadata. */
export interface RefSources {
  readonly agentSecrets: Readonly<Record<string, string>>;
  /** The agent's metadata (`agent.metadata.*`). */
  readonly agentMetadata?: Readonly<Record<string, unknown>>;
  readonly sessionSecrets: Readonly<Record<string, string>>;
  readonly sessionMetadata: Readonly<Record<string, unknown>>;
  /** Who creates the session: present only while session enrichment runs (the spec), never mid-conversation. */
  readonly caller?: Readonly<{ type: string; id: string; email?: string }>;
}

export class UnresolvedRef extends Error {}

/**
 * The model's arguments with the configuration's overrides merged over them: `resolved` is what the tool gets,
 * `shown` is what the `tool_input` event records (every secret `****`), `referenced` is what a client running a
 * client tool is given (every secret as its `{"$ref": …}`, which the client resolves from its own store).
 */
export function applyOverrides(args: Record<string, unknown>, override: Record<string, unknown> | undefined, sources: RefSources): { resolved: Record<string, unknown>; shown: Record<string, unknown>; referenced: Record<string, unknown> } {
  const resolved: Record<string, unknown> = { ...args };
  const shown: Record<string, unknown> = { ...args };
  const referenced: Record<string, unknown> = { ...args };
  for (const [k, v] of Object.entries(override ?? {})) [resolved[k], shown[k], referenced[k]] = resolveValue(v, k, sources);
  return { resolved, shown, referenced };
}

/** One override value, its `$ref`s resolved wherever they are inside it: [as the tool gets it, as events show it, as a client gets it]. */
function resolveValue(v: unknown, at: string, sources: RefSources): [unknown, unknown, unknown] {
  if (Array.isArray(v)) {
    const triples = v.map((x, i) => resolveValue(x, `${at}[${i}]`, sources));
    return [triples.map((p) => p[0]), triples.map((p) => p[1]), triples.map((p) => p[2])];
  }
  if (v === null || typeof v !== 'object') return [v, v, v];
  const ref = typeof (v as { $ref?: unknown }).$ref === 'string' ? (v as { $ref: string }).$ref : undefined;
  if (!ref) {
    const r: Record<string, unknown> = {};
    const s: Record<string, unknown> = {};
    const c: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) [r[k], s[k], c[k]] = resolveValue(x, `${at}.${k}`, sources);
    return [r, s, c];
  }
  const [scope, kind, ...rest] = ref.split('.');
  const name = rest.join('.');
  const plain = (value: unknown): [unknown, unknown, unknown] => [value, value, value];
  if (scope === 'agent' && kind === 'secrets' && Object.hasOwn(sources.agentSecrets, name)) return [sources.agentSecrets[name], '****', { $ref: ref }];
  if (scope === 'session' && kind === 'secrets' && Object.hasOwn(sources.sessionSecrets, name)) return [sources.sessionSecrets[name], '****', { $ref: ref }];
  if (scope === 'session' && kind === 'caller' && sources.caller && (name === 'type' || name === 'id' || (name === 'email' && sources.caller.email !== undefined))) return plain(sources.caller[name]);
  if (scope === 'agent' && kind === 'metadata' && sources.agentMetadata && Object.hasOwn(sources.agentMetadata, name)) return plain(sources.agentMetadata[name]);
  if (scope === 'session' && kind === 'metadata' && Object.hasOwn(sources.sessionMetadata, name)) return plain(sources.sessionMetadata[name]);
  throw new UnresolvedRef(`argument ${at}: {"$ref": "${ref}"} does not resolve (an absent secret or metadata field, or a reference this service does not know)`);
}
