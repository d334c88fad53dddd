import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the scripted server answers to one chat completion. It tests our orchestration (what we send, how we
 * relay, how we fail), never a model's quality.
 */
export interface ScriptedReply {
  /** Assistant text; streamed as `chunks` when given, else word by word. */
  readonly content?: string;
  readonly chunks?: readonly string[];
  readonly toolCalls?: readonly { readonly id?: string; readonly name: string; readonly arguments: string }[];
  readonly finishReason?: string;
  /** Token usage to report; `null` reports none (some servers do not). Default: derived from the text. */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly prompt_tokens_details?: object } | null;
  /** Delay before the response starts, and between streamed chunks (ms). */
  readonly firstByteDelayMs?: number;
  readonly chunkDelayMs?: number;
  /** An HTTP error instead of a completion, in OpenAI's error body. */
  readonly error?: { readonly status: number; readonly message: string; readonly type?: string };
  /** Accept the request and never answer (for timeouts). */
  readonly hang?: boolean;
  /** Streaming only: send this many chunks, then stall with the connection open (for idle timeouts). */
  readonly stallAfterChunks?: number;
  /**
   * Streaming only: send this many chunks, then wait until {@link ScriptedOpenAIServer.release} before sending the
   * rest (a test holds an answer mid-stream: a caller disconnecting, a client re-attaching).
   */
  readonly holdAfterChunks?: number;
}

/** A request as the server received it, so tests can check what the service sent (headers, body). */
export interface CapturedRequest {
  readonly method: string;
  readonly path: string;
  /** The query string without its `?` ('' when none). */
  readonly query: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Record<string, unknown> | undefined;
  /** True once the client went away before the response ended (e.g. the service aborted upstream). */
  aborted: boolean;
}

/** A handler for a route other than chat completions (e.g. a classification endpoint): status and JSON body. */
export type RouteHandler = (req: CapturedRequest) => { status: number; json: unknown } | Promise<{ status: number; json: unknown }>;

/**
 * An OpenAI-compatible server on 127.0.0.1 (random port) that replays scripted completions: queued replies
 * first, then `onChat` (a function of the request), then `fallback`. `GET /v1/models` lists `models`. `start(host)`
 * listens on another address (the multi-host suite's bridge, which services in other network namespaces reach).
 */
export class ScriptedOpenAIServer {
  readonly requests: CapturedRequest[] = [];
  readonly models: Record<string, unknown>[] = [];
  fallback: ScriptedReply = { content: 'OK' };
  onChat?: (req: CapturedRequest) => ScriptedReply | undefined;
  private readonly queue: ScriptedReply[] = [];
  private readonly routes = new Map<string, RouteHandler>();
  private counter = 0;
  private readonly holding: (() => void)[] = [];
  private holdWaiters: (() => void)[] = [];

  private constructor(private readonly server: Server) {}

  static async start(host = '127.0.0.1'): Promise<ScriptedOpenAIServer> {
    const server = createServer();
    const scripted = new ScriptedOpenAIServer(server);
    server.on('request', (req, res) => void scripted.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return scripted;
  }

  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  /** The base URL an OpenAI client takes (`…/v1`). */
  get baseURL(): string {
    return `${this.url}/v1`;
  }

  /** Drops replies still queued (a test that must not get another test's leftover). */
  clear(): this {
    this.queue.length = 0;
    return this;
  }

  enqueue(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Answers held mid-stream now (`holdAfterChunks`). */
  get held(): number {
    return this.holding.length;
  }

  /** Resolves once an answer is held mid-stream. */
  whenHeld(): Promise<void> {
    return this.holding.length ? Promise.resolve() : new Promise((r) => this.holdWaiters.push(r));
  }

  /** Lets every held answer stream on. */
  release(): void {
    for (const go of this.holding.splice(0)) go();
  }

  route(method: string, path: string, handler: RouteHandler): this {
    this.routes.set(`${method.toUpperCase()} ${path}`, handler);
    return this;
  }

  chatRequests(): CapturedRequest[] {
    return this.requests.filter((r) => r.path.endsWith('/chat/completions'));
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    let body: Record<string, unknown> | undefined;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    } catch {
      body = undefined;
    }
    const captured: CapturedRequest = { method: req.method ?? 'GET', path, query: (req.url ?? '').split('?')[1] ?? '', headers: { ...req.headers }, body, aborted: false };
    this.requests.push(captured);
    res.on('close', () => {
      if (!res.writableFinished) captured.aborted = true;
    });
    const custom = this.routes.get(`${captured.method} ${path}`);
    if (custom) return void json(res, ...(Object.values(await custom(captured)) as [number, unknown]));
    if (captured.method === 'GET' && path.endsWith('/models')) return void json(res, 200, { object: 'list', data: this.models });
    const model = path.match(/\/models\/(.+)$/);
    if (captured.method === 'GET' && model) {
      const found = this.models.find((m) => m.id === decodeURIComponent(model[1]));
      return void (found ? json(res, 200, found) : json(res, 404, { error: { message: 'model not found', type: 'invalid_request_error' } }));
    }
    if (captured.method !== 'POST' || !path.endsWith('/chat/completions')) return void json(res, 404, { error: { message: `no route ${path}` } });
    const reply = this.queue.shift() ?? this.onChat?.(captured) ?? this.fallback;
    await this.reply(captured, reply, res);
  }

  private async reply(req: CapturedRequest, reply: ScriptedReply, res: ServerResponse): Promise<void> {
    if (reply.hang) return;
    await sleep(reply.firstByteDelayMs);
    if (reply.error) return void json(res, reply.error.status, { error: { message: reply.error.message, type: reply.error.type ?? 'server_error', code: null } });
    const id = `chatcmpl-scripted-${++this.counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(req.body?.model ?? 'scripted');
    const content = reply.content ?? reply.chunks?.join('') ?? '';
    const usage = reply.usage === null ? undefined : usageOf(reply, req, content);
    const toolCalls = reply.toolCalls?.map((t, i) => ({ index: i, id: t.id ?? `call_${i}`, type: 'function', function: { name: t.name, arguments: t.arguments } }));
    const finish = reply.finishReason ?? (toolCalls ? 'tool_calls' : 'stop');
    if (req.body?.stream !== true) {
      const message = { role: 'assistant', content: toolCalls ? null : content, ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}) };
      return void json(res, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], ...(usage ? { usage } : {}) });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (chunk: object) => res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...chunk })}\n\n`);
    const pieces = reply.chunks ?? (content.match(/\S+\s*/g) ?? []);
    send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    for (const [i, piece] of pieces.entries()) {
      if (reply.stallAfterChunks !== undefined && i >= reply.stallAfterChunks) return;
      if (reply.holdAfterChunks === i) {
        await new Promise<void>((go) => {
          this.holding.push(go);
          for (const w of this.holdWaiters.splice(0)) w();
        });
      }
      await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      send({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
    // Tool calls stream as OpenAI sends them: the id and name first, then the arguments in pieces.
    for (const call of toolCalls ?? []) {
      send({ choices: [{ index: 0, delta: { tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, finish_reason: null }] });
      for (const piece of call.function.arguments.match(/[\s\S]{1,8}/g) ?? []) {
        await sleep(reply.chunkDelayMs);
        send({ choices: [{ index: 0, delta: { tool_calls: [{ index: call.index, function: { arguments: piece } }] }, finish_reason: null }] });
      }
    }
    send({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    const options = req.body?.stream_options as { include_usage?: boolean } | undefined;
    if (usage && options?.include_usage) send({ choices: [], usage });
    res.end('data: [DONE]\n\n');
  }
}

function usageOf(reply: ScriptedReply, req: CapturedRequest, content: string) {
  const given = reply.usage;
  const prompt = given?.prompt_tokens ?? Math.ceil(JSON.stringify(req.body?.messages ?? []).length / 4);
  const completion = given?.completion_tokens ?? Math.ceil(content.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(given?.prompt_tokens_details ? { prompt_tokens_details: given.prompt_tokens_details } : {}) };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const sleep = (ms?: number) => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
