import { Inject, Injectable } from '@nestjs/common';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { DomainError, invalid, OUTBOUND_HTTP, OutboundHttp, outboundRefusal } from '@lib/platform';
import { authContentProblems } from '../../domain/auth';
import { inferCapabilities, LlmCapabilities } from '../../domain/capabilities';
import { defaultUri, validateCombination, validateSettings } from '../../domain/llm';
import { checkOutboundTargets } from '../outbound-targets';
import type { ChatUpstream } from '../provider/chat-upstream.port';
import { LlmProviders } from '../provider/llm-providers';
import type { Endpoint } from '../../adapters/openai/openai-provider';
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

/**
 * Probes a candidate endpoint of any provider type: one plain completion must work (else the candidate is
 * refused with the upstream's reason), then one small request per capability. Each probe costs a few tokens
 * of the candidate. Probes that need a request field the type's adapter does not translate (tools,
 * `response_format`) are not sent: those capabilities are guessed from the name and say so.
 */
@Injectable()
export class DiscoverLlm {
  constructor(
    private readonly providers: LlmProviders,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  /** `uri` in the answer is the one a registration would store (Anthropic's default when none was given). */
  async discover(candidate: Endpoint): Promise<{ capabilities: LlmCapabilities; discovery: Discovery; uri: string }> {
    const endpoint = checkedCandidate(candidate);
    await checkOutboundTargets(this.outbound.policy, endpoint);
    const upstream = this.providers.connect(endpoint);
    const ask = (body: Record<string, unknown>) => this.ask(upstream, body);
    await ask({ messages: [{ role: 'user', content: 'Reply with the word OK.' }], max_tokens: 16 }).catch((e: unknown) => {
      // Refused at connect time (the name resolved elsewhere than at the check above): the candidate's uri is at fault.
      const refused = outboundRefusal(e);
      if (refused) throw invalid('llm.outbound_refused', `Invalid uri: ${refused.message}`, { uri: refused.message });
      throw upstreamError(e, endpoint.model, upstream.idleTimeoutSeconds, upstream.secrets, false, upstream.classify);
    });
    const notTranslated = (guess: boolean, field: string): Promise<Finding<boolean>> =>
      Promise.resolve({ value: guess, method: 'inferred', detail: `${field} is not translated for LLM type ${upstream.type}; guessed from the model name` });
    const guess = inferCapabilities(endpoint.model);
    const [image_support, tool_calling, structured_outputs, requires_role_alternation, context_limit] = await Promise.all([
      this.probe(upstream, guess.image_support, async () => {
        const text = await ask({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What colour is this image? Answer with one word.' }, { type: 'image_url', image_url: { url: RED_PNG } }] }], max_tokens: 16 });
        return /red/i.test(text) ? 'true' : `false: named the colour as "${text.slice(0, 40)}"`;
      }),
      !upstream.translates.tools ? notTranslated(guess.tool_calling, 'tools') : this.probe(upstream, guess.tool_calling, async () => {
        const tools = [{ type: 'function', function: { name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} } } }];
        const reply = await this.raw(upstream, { messages: [{ role: 'user', content: 'Call the get_time tool.' }], tools, max_tokens: 50 });
        return reply.choices[0]?.message?.tool_calls?.length ? 'true' : 'false: accepted tools but called none';
      }),
      !upstream.translates.responseFormat ? notTranslated(guess.structured_outputs, 'response_format') : this.probe(upstream, guess.structured_outputs, async () => {
        const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
        const text = await ask({ messages: [{ role: 'user', content: 'What is the capital of France?' }], response_format: { type: 'json_schema', json_schema: { name: 'probe', strict: true, schema } }, max_tokens: 50 });
        return typeof (JSON.parse(text) as { answer?: unknown }).answer === 'string' ? 'true' : 'false: the reply missed the schema';
      }),
      // A server that refuses two user messages in a row requires alternation; one that answers does not.
      this.probe(upstream, guess.requires_role_alternation, async () => {
        await ask({ messages: [{ role: 'user', content: 'Say A.' }, { role: 'user', content: 'Say B.' }], max_tokens: 16 });
        return 'false: answered two consecutive user messages';
      }, 'true'),
      this.contextLimit(upstream, guess.context_limit),
    ]);
    const discovery: Discovery = { image_support, tool_calling, structured_outputs, requires_role_alternation, context_limit };
    const capabilities = Object.fromEntries(Object.entries(discovery).map(([k, f]) => [k, f.value])) as unknown as LlmCapabilities;
    return { capabilities, discovery, uri: endpoint.uri };
  }

  /** Runs a probe: "true"/"false: why" from its answer; an upstream 4xx means the feature was refused. */
  private async probe(upstream: ChatUpstream, guess: boolean, run: () => Promise<string>, onRefusal = 'false'): Promise<Finding<boolean>> {
    try {
      const verdict = await run();
      return { value: verdict === 'true', method: 'probe', detail: verdict === 'true' ? 'the probe succeeded' : verdict.replace(/^false: /, '') };
    } catch (e) {
      const failure = upstream.classify(e);
      if (failure.kind === 'status' && failure.status >= 400 && failure.status < 500) {
        return { value: onRefusal === 'true', method: 'probe', detail: `the server refused the probe (${failure.status})` };
      }
      // The upstream's own text is not shown (docs/security.md): only what kind of failure it was.
      const why = e instanceof DomainError ? e.message : failure.kind === 'status' ? `the server answered ${failure.status}` : failure.kind === 'unreachable' ? 'the server could not be reached' : failure.kind;
      return { value: guess, method: 'inferred', detail: `the probe failed (${why}); guessed from the model name` };
    }
  }

  private async contextLimit(upstream: ChatUpstream, guess: number): Promise<Finding<number>> {
    try {
      const reported = await upstream.contextLimit();
      if (reported) return { value: reported.value, method: 'models_endpoint', detail: reported.detail };
    } catch {
      /* a server without a models endpoint: fall back to the name */
    }
    return { value: guess, method: 'inferred', detail: 'the server does not report it; guessed from the model name' };
  }

  private async ask(upstream: ChatUpstream, body: Record<string, unknown>): Promise<string> {
    return (await this.raw(upstream, body)).choices[0]?.message?.content ?? '';
  }

  /** One probe, bounded by the candidate's idle timeout as a chat would be. */
  private async raw(upstream: ChatUpstream, body: Record<string, unknown>): Promise<ChatCompletion> {
    const signal = AbortSignal.timeout(upstream.idleTimeoutSeconds * 1000);
    try {
      return await upstream.complete({ ...body, model: upstream.model, messages: body.messages as never }, signal);
    } catch (e) {
      if (signal.aborted) throw upstreamError(e, upstream.model, upstream.idleTimeoutSeconds, upstream.secrets, true, upstream.classify);
      throw e;
    }
  }
}

/** The candidate as a registration would store it (default uri), refused as a registration would be. */
function checkedCandidate(candidate: Endpoint): Endpoint {
  const type = candidate.type ?? 'openai-compatible';
  const uri = candidate.uri || defaultUri(type, candidate.auth?.type) || '';
  validateSettings({ uri, headers: candidate.headers });
  validateCombination({ type, uri, auth: candidate.auth });
  const problems = candidate.auth ? authContentProblems(candidate.auth) : {};
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.invalid_auth', `Invalid ${first[0]}: ${first[1]}`, problems);
  return { ...candidate, type, uri };
}
