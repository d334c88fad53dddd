import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/platform';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { createLogger } from '../apps/api/src/logger';
import { startApp } from '../apps/app';
import { now, percentile, report, round } from './common';
import { FakeSlack, signedMention } from './fake-slack';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';
const SIGNING = 'bench-slack-signing-secret-0123456789';
const BOT = 'xoxb-bench-bot-token';
const ANSWER = 'Refunds are paid within 14 days.';
const SLOW_MS = 2000;

async function post(url: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Slack connector (issue 18, docs/connectors.md): signed `app_mention` deliveries, each in its own thread, sent at
 * a fixed concurrency the way Slack sends them (the next delivery does not wait for the previous reply). Measures
 * the webhook's acknowledgement (Slack's 3-second rule), delivery → reply at the fake Slack API (turn and post
 * through the worker wing), throughput end to end and peak RSS; then the acknowledgement again while 8 turns
 * wait 2 s on the model each, which it must not wait for. The model answers at once otherwise. Zoom Contact
 * Center's acknowledgement and delivery → callback are measured the same way (Google Chat is left out: its
 * deliveries need an RS256 token from a fake Google key set, which only the test support has).
 */
export async function connectorsBench(args: string[]): Promise<void> {
  const messages = Number(args[0] ?? 300);
  const concurrency = Number(args[1] ?? 8);
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: ANSWER, usage: { prompt_tokens: 30, completion_tokens: 8 } };
  upstream.onChat = (req) => {
    const users = ((req.body?.messages ?? []) as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
    return JSON.stringify(users[users.length - 1]?.content ?? '').includes('slow') ? { content: ANSWER, firstByteDelayMs: SLOW_MS } : undefined;
  };
  const slack = await FakeSlack.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-connectors-'));
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_OWNER_PER_MINUTE: '10000000', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', SLACK_API_URL: slack.apiUrl, SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS ?? 'FULL' });
  const { app, url } = await startApp(config, 'all', createLogger('silent'), () => undefined);
  let peakRss = process.memoryUsage().rss;
  const rssAtStart = peakRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  try {
    await post(url, '/v2/llms', { name: 'bench', model: 'upstream-model', uri: `${upstream.baseURL}/chat/completions` });
    await post(url, '/v2/agents', { key: 'bench', name: 'Bench', model: { name: 'bench' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Answer briefly.' }] } } });
    const connector = await post(url, '/v2/agents/bench/connectors', { name: 'Support', configuration: { type: 'slack', bot_token: BOT, signing_secret: SIGNING, api_app_id: 'A1' } });
    const webhook = `${url}${connector.configuration.webhook_path}`;

    /** One delivery: the acknowledgement's latency, and a promise of delivery → reply (`key` names the reply). */
    const send = async (target: string, key: string, body: string, headers: Record<string, string>) => {
      const sent = now();
      const res = await fetch(target, { method: 'POST', headers, body });
      await res.text();
      const ack = now() - sent;
      if (res.status !== 200) throw new Error(`delivery ${key}: ${res.status}`);
      if (upstream.requests.length > 1000) upstream.requests.length = 0;
      return { ack, sent, reply: slack.reply(key).then((at) => ({ at, e2e: at - sent })) };
    };
    /** A Slack mention in its own thread, signed as Slack sends it. */
    const deliver = (channel: string, i: number, text: string) => {
      const ts = `${1700000000 + i}.000100`;
      const { body, headers } = signedMention(SIGNING, 'A1', channel, ts, text);
      return send(webhook, `${channel}:${ts}`, body, headers);
    };
    /** `count` deliveries by `concurrency` senders, each sending its next as soon as the last was acknowledged. */
    const burst = async (count: number, one: (i: number) => ReturnType<typeof send>, stop: () => boolean = () => false) => {
      const out: Awaited<ReturnType<typeof send>>[] = [];
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < count && !stop()) out.push(await one(next++));
      }));
      return out;
    };
    const slackBurst = (channel: string, count: number, stop?: () => boolean) => burst(count, (i) => deliver(channel, i, `question ${i}`), stop);

    const warm = await slackBurst('CWARM', Math.min(50, messages));
    await Promise.all(warm.map((d) => d.reply));

    const started = now();
    const main = await slackBurst('CMAIN', messages);
    const replies = await Promise.all(main.map((d) => d.reply));
    const elapsed = (Math.max(...replies.map((r) => r.at)) - started) / 1000;
    const wrong = [...slack.replies.values()].filter((r) => r.text !== ANSWER || r.auth !== `Bearer ${BOT}`).length;
    if (wrong) throw new Error(`${wrong} replies with the wrong text or token`);
    const peakMain = peakRss;

    // Zoom Contact Center: the connector's token in a header, one engagement per delivery, the reply to callback_url.
    const zoom = await post(url, '/v2/agents/bench/connectors', { name: 'ZCC', configuration: { type: 'zoom', callback_url: `${slack.url}/zoom/callback` } });
    const zoomHook = `${url}${zoom.configuration.webhook_path}`;
    const zoomHeaders = { 'content-type': 'application/json', 'x-zoom-connector-token': zoom.configuration.connector_token };
    const zoomOne = (i: number) => send(zoomHook, `zoom:eng-${i}`, JSON.stringify({ engagement_id: `eng-${i}`, message_id: `m-${i}`, message: { text: `question ${i}` } }), zoomHeaders);
    const zoomMain = await burst(messages, zoomOne);
    const zoomReplies = await Promise.all(zoomMain.map((d) => d.reply));
    if (zoomMain.some((_, i) => slack.replies.get(`zoom:eng-${i}`)?.text !== ANSWER)) throw new Error('a Zoom callback with the wrong text');

    // 8 slow turns in flight; the acknowledgements measured are those that came back before any of them answered.
    const slowAcks: number[] = [];
    const slowE2e: number[] = [];
    const duringAcks: number[] = [];
    for (let round = 0; round < 3; round++) {
      const slow = await Promise.all(Array.from({ length: 8 }, (_, i) => deliver(`CSLOW${round}`, i, 'slow question')));
      let answered = false;
      const firstSlow = Promise.race(slow.map((d) => d.reply)).then((r) => {
        answered = true;
        return r.at;
      });
      const during = await slackBurst(`CDURING${round}`, 10_000, () => answered);
      const cut = await firstSlow;
      slowAcks.push(...slow.map((d) => d.ack));
      duringAcks.push(...during.filter((d) => d.sent + d.ack < cut).map((d) => d.ack));
      slowE2e.push(...(await Promise.all(slow.map((d) => d.reply))).map((r) => r.e2e));
      await Promise.all(during.map((d) => d.reply));
    }

    const p = (xs: number[], q: number) => round(percentile(xs, q), 1);
    const mb = (b: number) => round(b / 1024 / 1024, 1);
    report(
      'connectors',
      [
        { measure: `Slack ack, ${messages} deliveries at ${concurrency}`, n: main.length, p50_ms: p(main.map((d) => d.ack), 50), p99_ms: p(main.map((d) => d.ack), 99), max_ms: p(main.map((d) => d.ack), 100) },
        { measure: 'delivery → reply at Slack API', n: replies.length, p50_ms: p(replies.map((r) => r.e2e), 50), p99_ms: p(replies.map((r) => r.e2e), 99), max_ms: p(replies.map((r) => r.e2e), 100) },
        { measure: 'answered end to end', n: replies.length, msgs_per_s: round(replies.length / elapsed, 1), rss_start_mb: mb(rssAtStart), peak_rss_mb: mb(peakMain) },
        { measure: `Zoom ack, ${messages} deliveries at ${concurrency}`, n: zoomMain.length, p50_ms: p(zoomMain.map((d) => d.ack), 50), p99_ms: p(zoomMain.map((d) => d.ack), 99), max_ms: p(zoomMain.map((d) => d.ack), 100) },
        { measure: 'Zoom delivery → callback', n: zoomReplies.length, p50_ms: p(zoomReplies.map((r) => r.e2e), 50), p99_ms: p(zoomReplies.map((r) => r.e2e), 99), max_ms: p(zoomReplies.map((r) => r.e2e), 100) },
        { measure: `ack of the slow deliveries (model ${SLOW_MS} ms)`, n: slowAcks.length, p50_ms: p(slowAcks, 50), p99_ms: p(slowAcks, 99), max_ms: p(slowAcks, 100) },
        { measure: 'ack while 8 slow turns run', n: duringAcks.length, p50_ms: p(duringAcks, 50), p99_ms: p(duringAcks, 99), max_ms: p(duringAcks, 100) },
        { measure: 'slow delivery → reply', n: slowE2e.length, p50_ms: p(slowE2e, 50), p99_ms: p(slowE2e, 99), max_ms: p(slowE2e, 100) },
      ],
      { messages, concurrency, synchronous: config.sqliteSynchronous, peakRssWholeRunMb: mb(peakRss), bar: 'ack p99 well under 3000 ms (Slack retries after 3 s), also while turns are slow' },
    );
  } finally {
    clearInterval(sampler);
    await app.close();
    await upstream.close();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
