import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('has defaults that run the embedded service', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, sqliteSynchronous: 'FULL', readYourWritesTimeoutMs: 10_000, logLevel: 'info' });
    // Reachable from this machine only until the operator says otherwise (the container image binds all interfaces).
    expect(c.host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(c.dataDir).toMatch(/data$/);
    expect(c.eventStoreUrl ?? c.mongoUrl ?? c.typesenseUrl).toBeUndefined();
    // No Prometheus listener unless asked; when asked, on loopback unless told.
    expect(c.metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0');
    expect(() => loadConfig({ METRICS_PORT: 'on' })).toThrow(/METRICS_PORT must be an integer from 0 to 65535, got "on"/);
  });

  it('reports every bad value at once, naming the variable and what it accepts', () => {
    try {
      loadConfig({ PORT: '99999', EVENTSTORE_URL: 'not a url', MONGODB_URL: 'http://x', TYPESENSE_URL: 'http://ts:8108', ADMIN_API_KEY: 'short', LOG_LEVEL: 'loud' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT must be an integer from 0 to 65535, got "99999"/);
      expect(problems).toMatch(/EVENTSTORE_URL must be a URL/);
      expect(problems).toMatch(/MONGODB_URL must use one of the schemes mongodb, mongodb\+srv/);
      expect(problems).toMatch(/TYPESENSE_API_KEY is required when TYPESENSE_URL is set/);
      expect(problems).toMatch(/ADMIN_API_KEY must be 24 to 256 characters/);
      expect(problems).toMatch(/LOG_LEVEL must be one of/);
    }
  });

  it('reads the outbound policy, refusing private targets unless told, and reports malformed entries', () => {
    expect(loadConfig({}).outbound).toEqual({ allowPrivate: false, allowedHosts: [], deniedHosts: [] });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', OUTBOUND_ALLOWED_HOSTS: 'localhost:11434' }).outbound).toMatchObject({ allowPrivate: true, allowedHosts: ['localhost:11434'] });
    expect(() => loadConfig({ OUTBOUND_DENIED_HOSTS: '10.0.0.0/99' })).toThrow(/OUTBOUND_DENIED_HOSTS: "10.0.0.0\/99" is not an IP address or CIDR range/);
  });

  describe('with POSTGRES_URL (processes on several hosts, a DATA_DIR each)', () => {
    const keys = { ADMIN_API_KEY: 'zut_shared_owner_key_0123456789abcdef', OAUTH_SIGNING_KEY: 'x'.repeat(44), SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') };
    const url = 'postgres://ars:db-password@db.internal:5432/ars';

    it('starts when the three generated-by-default keys are given', () => {
      const c = loadConfig({ POSTGRES_URL: url, ...keys });
      expect(c).toMatchObject({ postgresUrl: url, adminApiKey: keys.ADMIN_API_KEY, oauthSigningKey: keys.OAUTH_SIGNING_KEY, secretsKey: keys.SECRETS_KEY });
    });

    it.each(['ADMIN_API_KEY', 'OAUTH_SIGNING_KEY', 'SECRETS_KEY'] as const)('refuses to start without %s, naming it and why, never the URL', (name) => {
      const env: Record<string, string> = { POSTGRES_URL: url, ...keys };
      delete env[name];
      const error = (() => {
        try {
          loadConfig(env);
        } catch (e) {
          return e;
        }
        throw new Error('expected a ConfigError');
      })() as ConfigError;
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.problems).toHaveLength(1);
      const [problem] = error.problems;
      expect(problem).toMatch(new RegExp(`^POSTGRES_URL is set, so ${name} must be set too, the same on every process`));
      expect(problem).toMatch(/each host would generate its own/);
      expect(problem).toMatch(/Several hosts \(PostgreSQL\)/);
      for (const other of ['ADMIN_API_KEY', 'OAUTH_SIGNING_KEY', 'SECRETS_KEY'].filter((n) => n !== name)) expect(problem).not.toMatch(new RegExp(`so [A-Z_, ]*${other}`));
      expect(error.message).not.toMatch(/db-password|db\.internal/);
    });

    it('names every missing key in one problem, beside the other problems', () => {
      try {
        loadConfig({ POSTGRES_URL: url, PORT: 'x' });
        throw new Error('expected a ConfigError');
      } catch (e) {
        const problems = (e as ConfigError).problems;
        expect(problems).toHaveLength(2);
        expect(problems.join('\n')).toMatch(/so ADMIN_API_KEY, OAUTH_SIGNING_KEY, SECRETS_KEY must be set too/);
      }
    });

    it('leaves the embedded default (no POSTGRES_URL) generating them under DATA_DIR', () => {
      const c = loadConfig({});
      expect(c.adminApiKey ?? c.oauthSigningKey ?? c.secretsKey).toBeUndefined();
    });
  });

  it('accepts the production engines', () => {
    const c = loadConfig({ EVENTSTORE_URL: 'esdb://localhost:2113?tls=false', MONGODB_URL: 'mongodb://localhost:27017/?replicaSet=rs0', TYPESENSE_URL: 'http://localhost:8108', TYPESENSE_API_KEY: 'k' });
    expect(c.eventStoreUrl).toBe('esdb://localhost:2113?tls=false');
  });

  it('limits the corpora to 1,000 with the embedded search index and not with Typesense, unless told', () => {
    expect(loadConfig({}).maxCorpora).toBe(1_000);
    expect(loadConfig({ TYPESENSE_URL: 'http://localhost:8108', TYPESENSE_API_KEY: 'k' }).maxCorpora).toBe(0);
    expect(loadConfig({ MAX_CORPORA: '0' }).maxCorpora).toBe(0);
    expect(loadConfig({ TYPESENSE_URL: 'http://localhost:8108', TYPESENSE_API_KEY: 'k', MAX_CORPORA: '50000' }).maxCorpora).toBe(50_000);
    expect(() => loadConfig({ MAX_CORPORA: '-1' })).toThrow(/MAX_CORPORA must be an integer/);
  });

  it('reads the worker settings: renewal a third of the TTL unless given, and always below it', () => {
    expect(loadConfig({})).toMatchObject({ leaseTtlMs: 15_000, leaseRenewMs: 5_000, workerPollMs: 5_000 });
    expect(loadConfig({ LEASE_TTL_MS: '1500', WORKER_POLL_MS: '300' })).toMatchObject({ leaseTtlMs: 1500, leaseRenewMs: 500, workerPollMs: 300 });
    expect(loadConfig({})).toMatchObject({ heapGrowingPercent: 50 });
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' })).toMatchObject({ heapGrowingPercent: 0 });
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '-5' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ LEASE_TTL_MS: '1000', LEASE_RENEW_MS: '1000' })).toThrow(/LEASE_RENEW_MS \(1000\) must be below LEASE_TTL_MS \(1000\)/);
  });
});
