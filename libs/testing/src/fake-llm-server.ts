import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CapturedRequest } from './scripted-openai-server';

/**
 * What a fake provider answers to one generation request, whatever its protocol. It tests our translation and
 * orchestration (what we send, how we relay, how we fail), never a model's quality.
 */
export interface FakeReply {
  /** Assistant text; streamed as `chunks` when given, else word by word. */
  readonly content?: string;
  readonly chunks?: readonly string[];
  /**
   * Token counts as the service should report them: `input` includes `cachedInput`, `output` includes
   * `reasoning`; each fake writes them in its provider's own fields. `null` reports none. Default: from the text.
   */
  readonly usage?: { readonly input: number; readonly output: number; readonly cachedInput?: number; readonly reasoning?: number } | null;
  /** The provider's own stop reason (`max_tokens`, `MAX_TOKENS`, `incomplete`…); default: a normal stop. */
  readonly stop?: string;
  readonly firstByteDelayMs?: number;
  readonly chunkDelayMs?: number;
  /** An HTTP error instead of an answer, in the provider's error body. */
  readonly error?: { readonly status: number; readonly message: string };
  /** Streaming only: after the chunks, the provider's in-stream error event instead of the end. */
  readonly streamError?: string;
  /** Accept the request and never answer (for timeouts). */
  readonly hang?: boolean;
  /** Streaming only: send this many chunks, then stall with the connection open (for idle timeouts). */
  readonly stallAfterChunks?: number;
}

/** A captured request with its query string and exact body bytes (SigV4 signs them; a token endpoint reads a form). */
export interface FakeRequest extends CapturedRequest {
  readonly query: string;
  readonly raw: Buffer;
}

/** A route other than generation: status and JSON body (e.g. a token endpoint, a model listing). */
export type FakeRoute = (req: FakeRequest) => { status: number; json: unknown } | Promise<{ status: number; json: unknown }>;

/** A generation request the protocol recognised: whether the answer streams, and the model it names. */
export interface Generation {
  readonly stream: boolean;
  readonly model: string;
}

/**
 * A provider's HTTP protocol on 127.0.0.1 (random port): requests captured, generation requests answered from
 * queued replies first, then `onRequest`, then `fallback`. Subclasses speak the wire format.
 */
export abstract class FakeLlmServer {
  readonly requests: FakeRequest[] = [];
  fallback: FakeReply = { content: 'OK' };
  onRequest?: (req: FakeRequest) => FakeReply | undefined;
  private readonly queue: FakeReply[] = [];
  private readonly routes: { method: string; path: RegExp; handler: FakeRoute }[] = [];
  private server?: Server;
  protected counter = 0;

  /** Starts listening; resolves with this server. */
  async listen(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  enqueue(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  route(method: string, path: string | RegExp, handler: FakeRoute): this {
    this.routes.push({ method: method.toUpperCase(), path: typeof path === 'string' ? new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : path, handler });
    return this;
  }

  /** The generation requests received, oldest first. */
  generations(): FakeRequest[] {
    return this.requests.filter((r) => this.recognise(r) !== undefined);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Which generation request this is, or undefined for any other path. */
  protected abstract recognise(req: FakeRequest): Generation | undefined;
  protected abstract answer(req: FakeRequest, generation: Generation, reply: FakeReply, res: ServerResponse): Promise<void>;
  protected abstract sendError(res: ServerResponse, status: number, message: string): void;

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const [path, query = ''] = (req.url ?? '/').split('?');
    let body: Record<string, unknown> | undefined;
    try {
      body = raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : undefined;
    } catch {
      body = undefined;
    }
    const captured: FakeRequest = { method: req.method ?? 'GET', path, query, raw, headers: { ...req.headers }, body, aborted: false };
    this.requests.push(captured);
    res.on('close', () => {
      if (!res.writableFinished) captured.aborted = true;
    });
    const custom = this.routes.find((r) => r.method === captured.method && r.path.test(path));
    if (custom) {
      const { status, json } = await custom.handler(captured);
      return void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    }
    const generation = this.recognise(captured);
    if (!generation) return this.sendError(res, 404, `no route ${captured.method} ${path}`);
    const reply = this.queue.shift() ?? this.onRequest?.(captured) ?? this.fallback;
    if (reply.hang) return;
    await sleep(reply.firstByteDelayMs);
    if (reply.error) return this.sendError(res, reply.error.status, reply.error.message);
    await this.answer(captured, generation, reply, res);
  }
}

/** The pieces a reply streams in. */
export const piecesOf = (reply: FakeReply): string[] => [...(reply.chunks ?? (reply.content ?? '').match(/\S+\s*/g) ?? [])];

export const textOfReply = (reply: FakeReply): string => reply.content ?? reply.chunks?.join('') ?? '';

/** The reply's usage, or one derived from the request and the text (4 characters a token). */
export function usageOfReply(reply: FakeReply, req: FakeRequest): { input: number; output: number; cachedInput: number; reasoning: number } | undefined {
  if (reply.usage === null) return undefined;
  const input = reply.usage?.input ?? Math.ceil(JSON.stringify(req.body ?? {}).length / 4);
  const output = reply.usage?.output ?? Math.ceil(textOfReply(reply).length / 4);
  return { input, output, cachedInput: reply.usage?.cachedInput ?? 0, reasoning: reply.usage?.reasoning ?? 0 };
}

/**
 * Streams the reply's pieces: `send(piece)` per piece with the chunk delay, honouring `stallAfterChunks`.
 * Returns false when the stream stalled or the client went away (the caller then stops writing).
 */
export async function streamPieces(reply: FakeReply, res: ServerResponse, send: (piece: string) => void): Promise<boolean> {
  for (const [i, piece] of piecesOf(reply).entries()) {
    if (reply.stallAfterChunks !== undefined && i >= reply.stallAfterChunks) return false;
    await sleep(reply.chunkDelayMs);
    if (res.destroyed) return false;
    send(piece);
  }
  return true;
}

export const sleep = (ms?: number): Promise<void> => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}
