import { Injectable } from '@nestjs/common';
import { APIError } from 'openai';
import { inferCapabilities, LlmCapabilities } from '../../domain/capabilities';
import { Endpoint, OpenAiProvider, Upstream } from '../provider/openai-provider';
import { upstreamError } from '../provider/upstream-errors';

/** How each capability was determined: a live probe, the server's model listing, or a guess from the name. */
export interface Finding<T> {
  readonly value: T;
  readonly method: 'probe' | 'models_endpoint' | 'inferred';
  readonly detail: string;
}
export type Discovery = { readonly [K in keyof LlmCapabilities]: Finding<LlmCapabilities[K]> };

/** A 16×16 solid red PNG: a model that sees images names its colour. */
const RED_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAF0lEQVR4nGP4z8BAEiJN9aiGUQ1DSgMAkPn/Afnh+ngAAAAASUVORK5CYII=';
const CONTEXT_FIELDS = ['max_model_len', 'context_length', 'context_window', 'max_context_length', 'max_input_tokens'];

/**
 * Probes a candidate endpoint: one plain completion must work (else the candidate is refused with the
 * upstream's reason), then one small request per capability. Each probe costs a few tokens of the candidate.
 */
@Injectable()
export class DiscoverLlm {
  constructor(private readonly provider: OpenAiProvider) {}

  async discover(endpoint: Endpoint): Promise<{ capabilities: LlmCapabilities; discovery: Discovery }> {
    const upstream = this.provider.connect(endpoint);
    const ask = (body: Record<string, unknown>) => this.ask(upstream, body);
    await ask({ messages: [{ role: 'user', content: 'Reply with the word OK.' }], max_tokens: 5 }).catch((e: unknown) => {
      throw upstreamError(e, endpoint.model, upstream.idleTimeoutSeconds, upstream.secrets);
    });
    const guess = inferCapabilities(endpoint.model);
    const [image_support, tool_calling, structured_outputs, requires_role_alternation, context_limit] = await Promise.all([
      this.probe(guess.image_support, async () => {
        const text = await ask({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What colour is this image? Answer with one word.' }, { type: 'image_url', image_url: { url: RED_PNG } }] }], max_tokens: 10 });
        return /red/i.test(text) ? 'true' : `false: named the colour as "${text.slice(0, 40)}"`;
      }),
      this.probe(guess.tool_calling, async () => {
        const tools = [{ type: 'function', function: { name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} } } }];
        const reply = await this.raw(upstream, { messages: [{ role: 'user', content: 'Call the get_time tool.' }], tools, max_tokens: 50 });
        return reply.choices[0]?.message?.tool_calls?.length ? 'true' : 'false: accepted tools but called none';
      }),
      this.probe(guess.structured_outputs, async () => {
        const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
        const text = await ask({ messages: [{ role: 'user', content: 'What is the capital of France?' }], response_format: { type: 'json_schema', json_schema: { name: 'probe', strict: true, schema } }, max_tokens: 50 });
        return typeof (JSON.parse(text) as { answer?: unknown }).answer === 'string' ? 'true' : 'false: the reply missed the schema';
      }),
      // A server that refuses two user messages in a row requires alternation; one that answers does not.
      this.probe(guess.requires_role_alternation, async () => {
        await ask({ messages: [{ role: 'user', content: 'Say A.' }, { role: 'user', content: 'Say B.' }], max_tokens: 5 });
        return 'false: answered two consecutive user messages';
      }, 'true'),
      this.contextLimit(upstream, endpoint.model, guess.context_limit),
    ]);
    const discovery: Discovery = { image_support, tool_calling, structured_outputs, requires_role_alternation, context_limit };
    const capabilities = Object.fromEntries(Object.entries(discovery).map(([k, f]) => [k, f.value])) as unknown as LlmCapabilities;
    return { capabilities, discovery };
  }

  /** Runs a probe: "true"/"false: why" from its answer; an upstream 4xx means the feature was refused. */
  private async probe(guess: boolean, run: () => Promise<string>, onRefusal = 'false'): Promise<Finding<boolean>> {
    try {
      const verdict = await run();
      return { value: verdict === 'true', method: 'probe', detail: verdict === 'true' ? 'the probe succeeded' : verdict.replace(/^false: /, '') };
    } catch (e) {
      if (e instanceof APIError && e.status && e.status >= 400 && e.status < 500) {
        return { value: onRefusal === 'true', method: 'probe', detail: `the server refused the probe (${e.status})` };
      }
      return { value: guess, method: 'inferred', detail: `the probe failed (${(e as Error).message.slice(0, 100)}); guessed from the model name` };
    }
  }

  private async contextLimit(upstream: Upstream, model: string, guess: number): Promise<Finding<number>> {
    try {
      const listing = (await upstream.client.models.list({ headers: await upstream.authHeaders() })).data as unknown as Record<string, unknown>[];
      const entry = listing.find((m) => m.id === model);
      const field = entry && CONTEXT_FIELDS.find((f) => typeof entry[f] === 'number');
      if (entry && field) return { value: entry[field] as number, method: 'models_endpoint', detail: `GET /models reports ${field}` };
    } catch {
      /* a server without /models: fall back to the name */
    }
    return { value: guess, method: 'inferred', detail: 'the server does not report it; guessed from the model name' };
  }

  private async ask(upstream: Upstream, body: Record<string, unknown>): Promise<string> {
    return (await this.raw(upstream, body)).choices[0]?.message?.content ?? '';
  }

  private async raw(upstream: Upstream, body: Record<string, unknown>) {
    return upstream.client.chat.completions.create({ model: upstream.model, ...body } as never, { headers: await upstream.authHeaders() }) as Promise<{
      choices: { message?: { content?: string | null; tool_calls?: unknown[] } }[];
    }>;
  }
}
