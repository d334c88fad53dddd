import { AddressInfo, Server } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** One sample of the text exposition: `name{label="value",…} value`. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * A strict reading of the Prometheus text format (0.0.4): every line is a `# HELP`, a `# TYPE` or a sample whose
 * labels are `name="value"` pairs with `\\`, `\"` and `\n` escapes; anything else fails the test. Values as Prometheus
 * reads them (Go's ParseFloat: NaN in any case; prom-client writes `Nan`).
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sample = new RegExp(`^(${name})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-]Inf)$`);
  for (const line of text.split('\n')) {
    if (line === '' || new RegExp(`^# (HELP ${name} .*|TYPE ${name} (counter|gauge|histogram|summary|untyped))$`).test(line)) continue;
    const m = sample.exec(line);
    if (!m) throw new Error(`not a line of the exposition format: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The listening servers of this process (Node's handle list: the only place that names them with their ports). */
const listeningServers = (): Set<Server> =>
  new Set((process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().filter((h): h is Server => h instanceof Server && h.listening));
/** The ports listened on since `before` was taken (servers other tests close meanwhile do not count). */
const newPorts = (before: Set<Server>): number[] => [...listeningServers()].filter((s) => !before.has(s)).map((s) => (s.address() as AddressInfo).port).sort();

describe('Prometheus exposition', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const corpus = 'zebra-corpus-7781';
  const document = 'doc-id-4242';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { METRICS_PORT: '0' } });
    await registerScripted(app, upstream, 'm', { auth: { type: 'bearer', token: 'sk-upstream-secret-99' } });
    await app.call('POST', '/v2/corpora', { key: corpus, name: 'Zebras' });
    await app.call('POST', `/v2/corpora/${corpus}/documents`, { id: document, type: 'core', document_parts: [{ text: 'Zebras have stripes.' }] });
    for (let i = 0; i < 3; i++) expect((await app.call('GET', `/v2/corpora/${corpus}`)).status).toBe(200);
    expect((await app.call('GET', `/v2/corpora/${corpus}/documents/${document}`)).status).toBe(200);
    expect((await app.call('GET', '/v2/corpora/no-such-corpus')).status).toBe(404);
    expect((await app.call('GET', '/v2/no/such/route')).status).toBe(404);
    upstream.enqueue({ content: 'Stripes.', usage: { prompt_tokens: 13, completion_tokens: 5 } });
    expect((await app.call('POST', '/v2/llms/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'zebras?' }] })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${app.started.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    return { text, samples: parseExposition(text) };
  };
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

  it('counts requests per route pattern, never per raw URL, and times them', async () => {
    expect(app.started.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { samples } = await scrape();
    expect(value(samples, 'http_requests_total', { method: 'GET', route: '/v2/corpora/:corpus_key', status: '200' })).toBe(3);
    expect(value(samples, 'http_requests_total', { method: 'GET', route: '/v2/corpora/:corpus_key', status: '404' })).toBe(1);
    expect(value(samples, 'http_requests_total', { method: 'GET', route: '/v2/corpora/:corpus_key/documents/:document_id' })).toBe(1);
    expect(value(samples, 'http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
    // The histogram is by route and method (the 404 of that route is timed too).
    expect(value(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/v2/corpora/:corpus_key' })).toBe(4);
    expect(value(samples, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/v2/corpora/:corpus_key', le: '+Inf' })).toBe(4);
  });

  it('exposes projection lag, append latency, worker queues and model tokens', async () => {
    const { samples } = await scrape();
    const lagged = samples.filter((s) => s.name === 'projection_lag_events').map((s) => s.labels.projection);
    expect(lagged).toEqual(expect.arrayContaining(['corpora', 'documents', 'search', 'metrics']));
    expect(value(samples, 'event_store_append_duration_seconds_count')).toBeGreaterThan(3);
    expect(samples.some((s) => s.name === 'worker_jobs' && s.labels.state === 'queued')).toBe(true);
    expect(samples.some((s) => s.name === 'worker_pipeline_runs_running')).toBe(true);
    expect(samples.some((s) => s.name === 'worker_timers_pending')).toBe(true);
    expect(value(samples, 'llm_tokens_total', { llm: 'm', direction: 'input' })).toBe(13);
    expect(value(samples, 'llm_tokens_total', { llm: 'm', direction: 'output' })).toBe(5);
    expect(value(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('puts no id, key or secret in a label', async () => {
    const { text, samples } = await scrape();
    for (const secret of [corpus, document, 'no-such-corpus', '/v2/no/such/route', app.key, 'sk-upstream-secret-99']) expect(text).not.toContain(secret);
    const routes = new Set(samples.filter((s) => s.labels.route).map((s) => s.labels.route));
    for (const route of routes) expect(route === '(unmatched)' || /^\/[a-zA-Z0-9_/:.-]*$/.test(route)).toBe(true);
  });

  it('is not served on the API port', async () => {
    expect((await fetch(`${app.url}/metrics`, { headers: { 'x-api-key': app.key } })).status).toBe(404);
  });

  it('an API-only process exposes no projection lag or timers, which it does not have', async () => {
    const api = await startTestApp({ role: 'api', env: { METRICS_PORT: '0' } });
    try {
      const samples = parseExposition(await (await fetch(`${api.started.metricsUrl}/metrics`)).text());
      expect(samples.some((s) => s.name === 'projection_lag_events' || s.name === 'worker_timers_pending')).toBe(false);
      expect(samples.some((s) => s.name === 'worker_jobs')).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('without METRICS_PORT nothing more listens and nothing is exposed', async () => {
    const before = listeningServers();
    const plain = await startTestApp();
    try {
      expect(plain.started.metricsUrl).toBeUndefined();
      expect(newPorts(before)).toEqual([Number(new URL(plain.url).port)]);
      expect((await plain.call('GET', '/metrics')).status).toBe(404);
    } finally {
      await plain.close();
    }
    const measured = await startTestApp({ env: { METRICS_PORT: '0' } });
    try {
      expect(newPorts(before)).toEqual([Number(new URL(measured.url).port), Number(new URL(measured.started.metricsUrl!).port)].sort());
    } finally {
      await measured.close();
    }
    // Closed with the app.
    expect(newPorts(before)).toEqual([]);
  });
});
