import type { ServerResponse } from 'node:http';
import { FakeGoogleTokenEndpoint } from './fake-google-token';
import { FakeLlmServer, FakeReply, FakeRequest, Generation, sendJson, streamPieces, textOfReply, usageOfReply } from './fake-llm-server';

const STATUS_NAMES: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

/**
 * Gemini's generateContent protocol on 127.0.0.1, as the Google Gen AI SDK calls it: the Gemini API
 * (`/{version}/models/{model}:generateContent`) and Vertex AI
 * (`/{version}/projects/{p}/locations/{l}/publishers/google/models/{model}:…`); `:streamGenerateContent?alt=sse`
 * streams server-sent events. `GET …/models/{model}` reports `inputTokenLimit` from `models`. A Google token
 * endpoint (`tokens`, at `/token`) mints access tokens for trusted service accounts.
 */
export class FakeGeminiServer extends FakeLlmServer {
  readonly models = new Map<string, number>();
  readonly tokens = new FakeGoogleTokenEndpoint(this);

  static start(): Promise<FakeGeminiServer> {
    const server = new FakeGeminiServer();
    server.route('GET', /\/models\/[^/:]+$/, (req) => {
      const id = decodeURIComponent(req.path.split('/').pop()!);
      const limit = server.models.get(id);
      return limit === undefined
        ? { status: 404, json: { error: { code: 404, message: `models/${id} is not found`, status: 'NOT_FOUND' } } }
        : { status: 200, json: { name: `models/${id}`, displayName: id, inputTokenLimit: limit, outputTokenLimit: 8192, supportedGenerationMethods: ['generateContent'] } };
    });
    return server.listen();
  }

  /** The Gemini API base a registration names (`uri`). */
  get geminiApiUri(): string {
    return `${this.url}/v1beta`;
  }

  /** A Vertex AI project/location base a registration names (`uri`). */
  vertexUri(project: string, location: string): string {
    return `${this.url}/v1/projects/${project}/locations/${location}`;
  }

  protected recognise(req: FakeRequest): Generation | undefined {
    const m = req.method === 'POST' ? /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(req.path) : null;
    return m ? { stream: m[2] === 'streamGenerateContent', model: decodeURIComponent(m[1]) } : undefined;
  }

  protected sendError(res: ServerResponse, status: number, message: string): void {
    sendJson(res, status, { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } });
  }

  protected async answer(req: FakeRequest, generation: Generation, reply: FakeReply, res: ServerResponse): Promise<void> {
    const responseId = `gemini-fake-${++this.counter}`;
    const usage = usageOfReply(reply, req);
    // Gemini counts thoughts apart from candidates; prompt tokens include cached content.
    const usageMetadata = usage && {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output - usage.reasoning,
      totalTokenCount: usage.input + usage.output,
      ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
      ...(usage.cachedInput ? { cachedContentTokenCount: usage.cachedInput } : {}),
    };
    const finishReason = reply.stop ?? 'STOP';
    const candidate = (text: string, finish?: string) => ({ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) });
    if (!generation.stream) {
      return sendJson(res, 200, { candidates: [candidate(textOfReply(reply), finishReason)], ...(usageMetadata ? { usageMetadata } : {}), modelVersion: generation.model, responseId });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (body: object) => res.write(`data: ${JSON.stringify({ ...body, modelVersion: generation.model, responseId })}\r\n\r\n`);
    const finished = await streamPieces(reply, res, (piece) => send({ candidates: [candidate(piece)] }));
    if (!finished) return;
    if (reply.streamError) {
      send({ error: { code: 503, message: reply.streamError, status: 'UNAVAILABLE' } });
      return void res.end();
    }
    send({ candidates: [candidate('', finishReason)], ...(usageMetadata ? { usageMetadata } : {}) });
    res.end();
  }
}
