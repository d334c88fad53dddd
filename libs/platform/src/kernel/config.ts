import { resolve } from 'node:path';
import { OutboundPolicyConfig, outboundPolicyFromEnv } from '../http/outbound-policy';

/** Service configuration, read once from the environment and validated at start. */
export interface ServiceConfig {
  readonly port: number;
  readonly host: string;
  /**
   * The Prometheus exposition's own listener (METRICS_PORT; docs/metrics.md): absent, nothing listens and nothing is
   * measured. 0 picks a free port (tests).
   */
  readonly metricsPort?: number;
  /** Its bind address (METRICS_HOST, default 127.0.0.1): operators' data, not the API's clients'. */
  readonly metricsHost: string;
  readonly dataDir: string;
  /** Bootstrap owner key; when undefined one is generated on first start and stored under `dataDir`. */
  readonly adminApiKey?: string;
  readonly eventStoreUrl?: string;
  /** PostgreSQL for the event log (issue 47, docs/deployment.md "PostgreSQL"); exclusive with `eventStoreUrl`. */
  readonly postgresUrl?: string;
  /** Connections each process keeps to PostgreSQL for the event log (POSTGRES_POOL_SIZE). */
  readonly postgresPoolSize: number;
  readonly mongoUrl?: string;
  readonly mongoDatabase: string;
  readonly typesenseUrl?: string;
  readonly typesenseApiKey?: string;
  /** Prefix of every Typesense collection and alias this service owns. */
  readonly typesenseCollectionPrefix: string;
  /** How long a write waits for the projections it implies before answering 503 (ms). */
  readonly readYourWritesTimeoutMs: number;
  /** Embedded search index: a table with this many vectors gets an HNSW graph (docs/search.md); 0 never. */
  readonly vectorIndexMinVectors: number;
  /** Parts from which an embedded search table is ranked from in-memory postings rather than FTS5's bm25() (0 = never). */
  readonly lexicalIndexMinRows: number;
  /** A query with this many postings on a table may be ranked on two threads (0 = never; docs/search.md). */
  readonly lexicalThreadMinPostings: number;
  /** The most MB the in-memory postings may hold, all corpora together; past it a corpus is ranked by FTS5 (0 = no bound). */
  readonly lexicalIndexMaxMb: number;
  readonly vectorIndexMaxMb: number;
  /**
   * Where the embedded event store commits (EVENT_STORE_WRITER): `inline` (default) on the main connection with
   * group commit, `thread` on a writer thread with its own connection (the event loop never waits on fsync), or
   * `auto`: a lone append while the writer thread is idle commits inline, everything else on the thread. Why
   * inline stays the default, with the figures: docs/architecture.md and docs/benchmarks/2026-11-25-session-14.md.
   */
  readonly eventStoreWriter: 'inline' | 'thread' | 'auto';
  readonly logLevel: string;
  /** `FULL` makes every acknowledged append survive power loss; `NORMAL` survives a process crash only. */
  readonly sqliteSynchronous: 'FULL' | 'NORMAL';
  /** Email of the owner user created at first start (ADMIN_EMAIL; none by default). */
  readonly adminEmail: string;
  /** HS256 key for OAuth access tokens; when undefined one is generated on first start under `dataDir`. */
  readonly oauthSigningKey?: string;
  /** Requests per minute one credential (key or app client) may make before 429. */
  readonly rateLimitPerMinute: number;
  /** Requests per minute all credentials of one user or app client may make together before 429. */
  readonly rateLimitPerOwnerPerMinute: number;
  /** Failed authentications per minute from one client address before 429 (docs/security.md). */
  readonly authFailuresPerMinute: number;
  /** Authenticated deliveries per minute one connector's webhook takes before 429 (docs/connectors.md). */
  readonly rateLimitPerConnectorPerMinute: number;
  /**
   * Where rate limits count (RATE_LIMIT_STORE): `shared` (a store every process opens), `memory` (this process
   * only), or `auto` (shared for `--role=api` processes and with MongoDB; memory for the one-process `all`).
   */
  readonly rateLimitStore: 'auto' | 'shared' | 'memory';
  /**
   * Which proxies to believe about the client address (`X-Forwarded-For`), in Express's `trust proxy` terms:
   * `false` (default: the socket's address), a hop count, or addresses/CIDRs/`loopback`/`uniquelocal`.
   */
  readonly trustProxy: boolean | number | string;
  /** Time allowed to receive a request body once the caller is authenticated (ms). */
  readonly requestBodyTimeoutMs: number;
  /**
   * Bytes of request bodies this process reads at once (REQUEST_BODIES_MAX_MB, in MB): past it a request with a
   * body is refused with 503 before it is read (docs/security.md).
   */
  readonly requestBodiesMaxBytes: number;
  /**
   * The most corpora the service holds (MAX_CORPORA; 0 = no limit): 1,000 by default with the embedded search index,
   * whose per-corpus SQLite tables make every schema change and every connection's schema load cost grow with the
   * count (docs/deployment.md, "How many corpora"); no limit by default with Typesense.
   */
  readonly maxCorpora: number;
  /** AES-256 key for credentials stored in events (LLM auth); when undefined one is generated under `dataDir`. */
  readonly secretsKey?: string;
  /** HHEM-compatible classification endpoint for factual-consistency scoring (docs/llms.md). */
  readonly fcsHhemUrl?: string;
  readonly fcsHhemApiKey?: string;
  /** Name of a registered LLM that judges factual consistency when no HHEM endpoint is set. */
  readonly fcsJudgeLlm?: string;
  /** A rerank endpoint for the `customer_reranker` (docs/query.md), and the name queries call it by. */
  readonly rerankerUrl?: string;
  readonly rerankerName: string;
  readonly rerankerModel?: string;
  readonly rerankerApiKey?: string;
  /** Which addresses calls leaving the service may reach (OUTBOUND_* settings, docs/security.md). */
  readonly outbound: OutboundPolicyConfig;
  /** Which addresses agent tools and connectors may reach (OUTBOUND_TOOLS_* and OUTBOUND_DENIED_HOSTS). */
  readonly outboundTools: OutboundPolicyConfig;
  /** Which addresses pipeline sources may reach (OUTBOUND_PIPELINES_* and OUTBOUND_DENIED_HOSTS). */
  readonly outboundPipelines: OutboundPolicyConfig;
  /** Webhook deliveries (OUTBOUND_WEBHOOKS_ALLOWED_HOSTS, OUTBOUND_WEBHOOKS_ALLOW_PRIVATE; docs/webhooks.md). */
  readonly outboundWebhooks: OutboundPolicyConfig;
  /** Upload parser threads (EXTRACTION_WORKERS, default 2): files parsed at once (docs/security.md). */
  readonly extractionWorkers: number;
  /** Wall-clock limit of one file's parse (EXTRACTION_TIMEOUT_MS, default 30 s): past it the upload is a 422. */
  readonly extractionTimeoutMs: number;
  /** Lambda sandboxes kept started and waiting once lambdas are used (LAMBDA_WARM_SANDBOXES, default 1; docs/lambda-tools.md). */
  readonly lambdaWarmSandboxes: number;
  /** Lambda sandboxes running at once, nested lambdas included (LAMBDA_MAX_SANDBOXES, default 4); more wait. */
  readonly lambdaMaxSandboxes: number;
  /** Lambda sandboxes one principal's calls hold at once (LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL, default 3); more wait. */
  readonly lambdaMaxSandboxesPerPrincipal: number;
  /** Nested lambda runs one call may start in all (LAMBDA_MAX_NESTED_RUNS, default 64); past it a tool error. */
  readonly lambdaMaxNestedRuns: number;
  /** Longest deadline a lambda may declare or be given (LAMBDA_MAX_DEADLINE_SECONDS, default 900). */
  readonly lambdaMaxDeadlineSeconds: number;
  /** The OS user lambda sandboxes run as when the service is root (LAMBDA_SANDBOX_USER: name or uid[:gid], default nobody). */
  readonly lambdaSandboxUser: string;
  /** `os` (default): sandboxes only under the OS boundary, else refused; `javascript`: the permission model alone (an opt-out, warned). */
  readonly lambdaSandboxIsolation: 'os' | 'javascript';
  /**
   * Make the lambda start snapshot in the background at a start that finds none in DATA_DIR, lambdas or not
   * (LAMBDA_SNAPSHOT_AT_START, default true), so a new install's first lambda does not load Pyodide in full.
   */
  readonly lambdaSnapshotAtStart?: boolean;
  /** Resident memory one lambda sandbox may reach before it is stopped (LAMBDA_MAX_MEMORY_MB, default 1024). */
  readonly lambdaMaxMemoryMb: number;
  /** Shortest gap between two firings of an agent schedule (SCHEDULE_MIN_INTERVAL_SECONDS, default 3600; docs/schedules.md). */
  readonly scheduleMinIntervalSeconds: number;
  /** How long a work lease holds without renewal (LEASE_TTL_MS, default 15 s; docs/workers.md). */
  readonly leaseTtlMs: number;
  /** How often a lease holder renews (LEASE_RENEW_MS, default a third of the TTL). */
  readonly leaseRenewMs: number;
  /** Safety poll of the worker wing: missed wake-ups and dead holders (WORKER_POLL_MS, default 5 s). */
  readonly workerPollMs: number;
  /**
   * V8's old-space growth after each full collection, in percent (HEAP_GROWING_PERCENT, default 50; 0: V8's own
   * heuristics, which let the heap grow up to 4× what survived). Set for the whole process at start (docs/deployment.md).
   */
  readonly heapGrowingPercent: number;
  /**
   * The environment this configuration was read from, for the libraries that read their own settings from it
   * (encoders), so that they see the same variables the service was started with.
   */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): ServiceConfig {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, schemes: string[]): string | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!schemes.includes(u.protocol.replace(/:$/, ''))) {
        problems.push(`${name} must use one of the schemes ${schemes.join(', ')}, got "${u.protocol}"`);
      }
    } catch {
      // Not echoed when it may hold a password (user:password@host): configuration errors are logged.
      problems.push(`${name} must be a URL such as ${schemes[0]}://host:port, got ${raw.includes('@') ? 'a value that is not one (not shown: it may hold a password)' : `"${raw}"`}`);
    }
    return raw;
  };
  const adminApiKey = text('ADMIN_API_KEY');
  if (adminApiKey !== undefined && !/^[A-Za-z0-9_\-.]{24,256}$/.test(adminApiKey)) {
    problems.push('ADMIN_API_KEY must be 24 to 256 characters of letters, digits, "_", "-" or "."');
  }
  const oauthSigningKey = text('OAUTH_SIGNING_KEY');
  if (oauthSigningKey !== undefined && oauthSigningKey.length < 32) problems.push('OAUTH_SIGNING_KEY must be at least 32 characters');
  const secretsKey = text('SECRETS_KEY');
  if (secretsKey !== undefined && !/^[0-9a-f]{64}$/i.test(secretsKey) && Buffer.from(secretsKey, 'base64').length !== 32) {
    problems.push('SECRETS_KEY must be 32 bytes, written as 64 hex digits or in base64 (e.g. `openssl rand -base64 32`)');
  }
  const typesenseUrl = url('TYPESENSE_URL', ['http', 'https']);
  const typesenseApiKey = text('TYPESENSE_API_KEY');
  if (typesenseUrl && !typesenseApiKey) problems.push('TYPESENSE_API_KEY is required when TYPESENSE_URL is set');
  const synchronous = (text('SQLITE_SYNCHRONOUS') ?? 'FULL').toUpperCase();
  const eventStoreWriter = (text('EVENT_STORE_WRITER') ?? 'inline').toLowerCase();
  if (!['inline', 'thread', 'auto'].includes(eventStoreWriter)) problems.push(`EVENT_STORE_WRITER must be inline, thread or auto, got "${eventStoreWriter}"`);
  const rateLimitStore = (text('RATE_LIMIT_STORE') ?? 'auto').toLowerCase();
  if (!['auto', 'shared', 'memory'].includes(rateLimitStore)) problems.push(`RATE_LIMIT_STORE must be auto, shared or memory, got "${rateLimitStore}"`);
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    problems.push(`SQLITE_SYNCHRONOUS must be FULL or NORMAL, got "${synchronous}"`);
  }
  const leaseTtlMs = int('LEASE_TTL_MS', 15_000, 100, 3_600_000);
  const leaseRenewMs = int('LEASE_RENEW_MS', Math.floor(leaseTtlMs / 3), 10, 3_600_000);
  if (leaseRenewMs >= leaseTtlMs) problems.push(`LEASE_RENEW_MS (${leaseRenewMs}) must be below LEASE_TTL_MS (${leaseTtlMs})`);
  const outbound = outboundPolicyFromEnv(env);
  const outboundTools = outboundPolicyFromEnv(env, 'tools');
  const outboundPipelines = outboundPolicyFromEnv(env, 'pipelines');
  const outboundWebhooks = outboundPolicyFromEnv(env, 'webhooks');
  problems.push(...outbound.problems, ...outboundTools.problems, ...outboundPipelines.problems, ...outboundWebhooks.problems);
  const lambdaIsolation = (text('LAMBDA_SANDBOX_ISOLATION') ?? 'os').toLowerCase();
  if (lambdaIsolation !== 'os' && lambdaIsolation !== 'javascript') problems.push(`LAMBDA_SANDBOX_ISOLATION must be os or javascript, got "${lambdaIsolation}"`);
  const lambdaSnapshot = (text('LAMBDA_SNAPSHOT_AT_START') ?? 'true').toLowerCase();
  if (lambdaSnapshot !== 'true' && lambdaSnapshot !== 'false') problems.push(`LAMBDA_SNAPSHOT_AT_START must be true or false, got "${lambdaSnapshot}"`);
  const config: ServiceConfig = {
    env,
    port: int('PORT', 8080, 0, 65535),
    // Loopback unless told: a fresh `npm start` prints the owner's key, and nothing else on the network should reach
    // it before its operator chooses to (the container image sets HOST=0.0.0.0; docs/deployment.md).
    host: text('HOST') ?? '127.0.0.1',
    metricsPort: text('METRICS_PORT') === undefined ? undefined : int('METRICS_PORT', 0, 0, 65535),
    metricsHost: text('METRICS_HOST') ?? '127.0.0.1',
    dataDir: resolve(text('DATA_DIR') ?? './data'),
    adminApiKey,
    eventStoreUrl: url('EVENTSTORE_URL', ['esdb', 'esdb+discover', 'kurrentdb', 'kurrentdb+discover', 'kdb']),
    postgresUrl: url('POSTGRES_URL', ['postgres', 'postgresql']),
    postgresPoolSize: int('POSTGRES_POOL_SIZE', 10, 2, 200),
    mongoUrl: url('MONGODB_URL', ['mongodb', 'mongodb+srv']),
    mongoDatabase: text('MONGODB_DATABASE') ?? 'ars',
    typesenseUrl,
    typesenseApiKey,
    typesenseCollectionPrefix: text('TYPESENSE_COLLECTION_PREFIX') ?? 'ars',
    readYourWritesTimeoutMs: int('READ_YOUR_WRITES_TIMEOUT_MS', 10_000, 0, 600_000),
    vectorIndexMinVectors: int('VECTOR_INDEX_MIN_VECTORS', 1_000, 0, 1_000_000_000),
    lexicalIndexMinRows: int('LEXICAL_INDEX_MIN_ROWS', 1_000, 0, 1_000_000_000),
    lexicalThreadMinPostings: int('LEXICAL_THREAD_MIN_POSTINGS', 150_000, 0, 1_000_000_000),
    lexicalIndexMaxMb: int('LEXICAL_INDEX_MAX_MB', 1024, 0, 1_000_000),
    vectorIndexMaxMb: int('VECTOR_INDEX_MAX_MB', 1024, 0, 1_000_000),
    eventStoreWriter: eventStoreWriter === 'thread' || eventStoreWriter === 'auto' ? eventStoreWriter : 'inline',
    logLevel: text('LOG_LEVEL') ?? 'info',
    sqliteSynchronous: synchronous === 'NORMAL' ? 'NORMAL' : 'FULL',
    adminEmail: text('ADMIN_EMAIL') ?? '',
    oauthSigningKey,
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
    rateLimitPerOwnerPerMinute: int('RATE_LIMIT_PER_OWNER_PER_MINUTE', 12_000, 1, 10_000_000),
    authFailuresPerMinute: int('AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    rateLimitPerConnectorPerMinute: int('RATE_LIMIT_PER_CONNECTOR_PER_MINUTE', 600, 1, 10_000_000),
    rateLimitStore: rateLimitStore as ServiceConfig['rateLimitStore'],
    trustProxy: trustProxy(text('TRUST_PROXY'), problems),
    requestBodyTimeoutMs: int('REQUEST_BODY_TIMEOUT_MS', 60_000, 100, 3_600_000),
    requestBodiesMaxBytes: int('REQUEST_BODIES_MAX_MB', 512, 1, 1_048_576) * 1024 * 1024,
    maxCorpora: int('MAX_CORPORA', typesenseUrl ? 0 : 1_000, 0, 100_000_000),
    secretsKey,
    fcsHhemUrl: url('FCS_HHEM_URL', ['http', 'https']),
    fcsHhemApiKey: text('FCS_HHEM_API_KEY'),
    fcsJudgeLlm: text('FCS_JUDGE_LLM'),
    rerankerUrl: url('RERANKER_URL', ['http', 'https']),
    rerankerName: text('RERANKER_NAME') ?? 'Rerank_Multilingual_v1',
    rerankerModel: text('RERANKER_MODEL'),
    rerankerApiKey: text('RERANKER_API_KEY'),
    outbound: outbound.config,
    outboundTools: outboundTools.config,
    outboundPipelines: outboundPipelines.config,
    outboundWebhooks: outboundWebhooks.config,
    extractionWorkers: int('EXTRACTION_WORKERS', 2, 1, 64),
    extractionTimeoutMs: int('EXTRACTION_TIMEOUT_MS', 30_000, 100, 600_000),
    lambdaWarmSandboxes: int('LAMBDA_WARM_SANDBOXES', 1, 0, 16),
    lambdaMaxSandboxes: int('LAMBDA_MAX_SANDBOXES', 4, 1, 64),
    lambdaMaxMemoryMb: int('LAMBDA_MAX_MEMORY_MB', 1024, 128, 16_384),
    lambdaMaxSandboxesPerPrincipal: int('LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL', 3, 1, 64),
    lambdaMaxNestedRuns: int('LAMBDA_MAX_NESTED_RUNS', 64, 0, 100_000),
    lambdaMaxDeadlineSeconds: int('LAMBDA_MAX_DEADLINE_SECONDS', 900, 1, 21_600),
    lambdaSandboxUser: text('LAMBDA_SANDBOX_USER') ?? 'nobody',
    lambdaSandboxIsolation: lambdaIsolation === 'javascript' ? 'javascript' : 'os',
    lambdaSnapshotAtStart: lambdaSnapshot === 'true',
    scheduleMinIntervalSeconds: int('SCHEDULE_MIN_INTERVAL_SECONDS', 3600, 1, 31_536_000),
    leaseTtlMs,
    leaseRenewMs,
    workerPollMs: int('WORKER_POLL_MS', 5_000, 10, 600_000),
    heapGrowingPercent: int('HEAP_GROWING_PERCENT', 50, 0, 1000),
  };
  if (!/^[A-Za-z0-9-]+$/.test(config.typesenseCollectionPrefix)) {
    problems.push('TYPESENSE_COLLECTION_PREFIX must contain only letters, digits and hyphens');
  }
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${config.logLevel}"`);
  }
  if (config.postgresUrl && config.eventStoreUrl) problems.push('POSTGRES_URL and EVENTSTORE_URL both name an event store: set one');
  if (config.postgresUrl) problems.push(...sharedSecretsProblems({ ADMIN_API_KEY: adminApiKey, OAUTH_SIGNING_KEY: oauthSigningKey, SECRETS_KEY: secretsKey }));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * With POSTGRES_URL the processes may run on several hosts, each with its own DATA_DIR, where these keys would
 * otherwise be generated: each host would make its own, so tokens signed on one would be refused by another, and
 * credentials sealed on one unreadable on another. They are not kept in the database either: the signing key there
 * would let anyone who reads the database mint tokens, and the secrets key beside the events it seals would seal
 * nothing (docs/deployment.md, "Several hosts (PostgreSQL)"). So the operator gives every process the same three.
 */
function sharedSecretsProblems(keys: Record<'ADMIN_API_KEY' | 'OAUTH_SIGNING_KEY' | 'SECRETS_KEY', string | undefined>): string[] {
  const missing = Object.entries(keys)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
  if (missing.length === 0) return [];
  return [
    `POSTGRES_URL is set, so ${missing.join(', ')} must be set too, the same on every process: unset, each host would generate its own under its DATA_DIR, ` +
      'and tokens signed on one host would be refused on another, credentials sealed on one unreadable on another. They are not kept in the database, ' +
      'where they would open what they protect (docs/deployment.md, "Several hosts (PostgreSQL)"). Make them with e.g. ' +
      '`openssl rand -base64 32` (SECRETS_KEY, OAUTH_SIGNING_KEY) and `openssl rand -hex 24` (ADMIN_API_KEY)',
  ];
}

/** `TRUST_PROXY`: true/false, a hop count, or a comma-separated list of addresses, CIDRs and Express's names. */
function trustProxy(raw: string | undefined, problems: string[]): boolean | number | string {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim());
  const ok = entries.every((e) => ['loopback', 'linklocal', 'uniquelocal'].includes(e) || /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e));
  if (!ok) problems.push(`TRUST_PROXY must be true, false, a hop count, or addresses/CIDRs/loopback/linklocal/uniquelocal separated by commas, got "${raw}"`);
  return entries.join(',');
}

export const SERVICE_CONFIG = Symbol('ServiceConfig');

