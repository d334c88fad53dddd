import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { registerScripted } from './llm-fixtures';
import { startTestApp, TestApp } from './test-app';
import { until } from './wait';

/**
 * The service with an indexing agent (the scripted model) for the pipeline source tests: each record is indexed
 * into the corpus `docs` under its source record id with the text the agent was given; records named in
 * `failing` make the model fail (an attempt that fails, then a dead letter).
 */
export interface PipelineHarness {
  readonly app: TestApp;
  readonly failing: Set<string>;
  /** The record texts the model was given, by source record id, in order (a document already indexed is not replaced). */
  readonly given: Map<string, string[]>;
  create(key: string, source: object, extra?: object): Promise<any>;
  /** Triggers a run and waits for its end: the run and the ids of the records it completed, sorted. */
  run(key: string): Promise<{ run: any; processed: string[]; events: any[] }>;
  /** Waits for a run (e.g. a retry run) to end. */
  ended(key: string, runId: string): Promise<any>;
  /** The indexed text of a document of `docs`. */
  indexed(id: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The scripted indexing agent of the source tests that start their own app: each record's input is kept in `got`
 * under `pipeline/record id`, a record named in `failing()` makes the model refuse it, any other is indexed as
 * `documentId(id)` with the first 20,000 characters it was given.
 */
export function recordIndexingReply(o: { got: Map<string, string>; failing: () => Set<string>; documentId: (id: string) => string; done: string; refusal: string }): (req: CapturedRequest) => ScriptedReply {
  return (req) => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: o.done };
    const content = messages[messages.length - 1].content;
    const input = typeof content === 'string' ? content : (content as { text?: string }[]).map((c) => c.text ?? '').join('');
    const id = /source_record_id: (\S+)/.exec(input)?.[1] ?? '';
    o.got.set(`${/pipeline "([^"]+)"/.exec(input)?.[1]}/${id}`, input);
    if (o.failing().has(id)) return { error: { status: 400, message: o.refusal } };
    return { toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id: o.documentId(id), text: input.slice(0, 20_000) }] }) }] };
  };
}

export async function startPipelineHarness(env: Record<string, string>): Promise<PipelineHarness> {
  const upstream = await ScriptedOpenAIServer.start();
  const failing = new Set<string>();
  const given = new Map<string, string[]>();
  upstream.onChat = (req: CapturedRequest): ScriptedReply => {
    const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
    if (messages[messages.length - 1].role === 'tool') return { content: 'Indexed.' };
    const input = messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    const id = /source_record_id: (\S+)/.exec(input)?.[1] ?? '';
    given.set(id, [...(given.get(id) ?? []), input.slice(input.indexOf('\n\n') + 2)]);
    if (failing.has(id)) return { error: { status: 400, message: `the model refused ${id}` } };
    const title = /title: (.*)/.exec(input)?.[1] ?? '';
    return { toolCalls: [{ id: 'c1', name: 'index', arguments: JSON.stringify({ documents: [{ id, title, text: input.slice(input.indexOf('\n\n') + 2) || title }] }) }] };
  };
  const app = await startTestApp({ env: { WORKER_POLL_MS: '200', ...env } });
  await registerScripted(app, upstream, 'm');
  await app.call('POST', '/v2/corpora', { key: 'docs', name: 'Docs' });
  const agent = await app.call('POST', '/v2/agents', { key: 'indexer', name: 'indexer', model: { name: 'm' }, tool_configurations: { index: { type: 'document_index', argument_override: { corpus_key: 'docs' } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
  if (agent.status !== 201) throw new Error(JSON.stringify(agent.body));
  const ended = (key: string, runId: string) =>
    until(`run ${runId} to end`, async () => {
      const r = (await app.call('GET', `/v2/pipelines/${key}/runs/${runId}`)).body;
      return r.status !== 'running' ? r : undefined;
    });
  return {
    app,
    failing,
    given,
    async create(key, source, extra = {}) {
      const res = await app.call('POST', '/v2/pipelines', { key, name: key, source, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'indexer' }, processing_options: { record_timeout_minutes: 1, max_concurrent_records: 4 }, ...extra });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
      return res.body;
    },
    async run(key) {
      const { body } = await app.call('POST', `/v2/pipelines/${key}/trigger`);
      if (!body?.id) throw new Error(`trigger: ${JSON.stringify(body)}`);
      const run = await ended(key, body.id);
      const events = (await app.call('GET', `/v2/pipelines/${key}/runs/${body.id}/events?order=asc&limit=200`)).body.events as any[];
      return { run, events, processed: events.filter((e) => e.type === 'record_processing' && e.status === 'completed').map((e) => e.source_record_id).sort() };
    },
    ended,
    async indexed(id) {
      const doc = await app.call('GET', `/v2/corpora/docs/documents/${encodeURIComponent(id)}`);
      return doc.status === 200 ? JSON.stringify(doc.body) : '';
    },
    async close() {
      await app.close();
      await upstream.close();
    },
  };
}
