import type { Response as OpenAiResponse, ResponseCreateParamsBase, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { invalid } from '@lib/platform';
import type { ChatUpstream, StreamItem } from '../../application/provider/chat-upstream.port';
import { ChatTurn, chunkMaker, completionOf, FinishReason, openAiUsage, translateRequest } from '../chat-translation';
import type { Upstream } from './openai-provider';
import { classifyOpenAiError } from './openai-errors';

/**
 * `type: openai-responses` through the official `openai` SDK's Responses API (OpenAI's reasoning models).
 * Chat messages become input messages in order; nothing is stored upstream (`store: false`): the service
 * keeps no response ids to continue from.
 */
export function openAiResponsesChat(upstream: Upstream): ChatUpstream {
  const request = (body: Parameters<ChatUpstream['complete']>[0]): ResponseCreateParamsBase => {
    const chat = translateRequest(body, 'openai-responses', ['reasoning_effort', 'user']);
    if (chat.stop) throw invalid('llm.untranslatable', 'Invalid stop: the Responses API has no stop sequences', { stop: 'not supported for LLM type openai-responses' });
    const extra = chat.extra as { reasoning_effort?: 'low' | 'medium' | 'high'; user?: string };
    return {
      model: upstream.model,
      input: chat.turns.map(inputOf),
      store: false,
      ...(chat.temperature !== undefined ? { temperature: chat.temperature } : {}),
      ...(chat.topP !== undefined ? { top_p: chat.topP } : {}),
      ...(chat.maxTokens !== undefined ? { max_output_tokens: chat.maxTokens } : {}),
      ...(extra.reasoning_effort ? { reasoning: { effort: extra.reasoning_effort } } : {}),
      ...(extra.user ? { user: extra.user } : {}),
    };
  };
  return {
    type: 'openai-responses',
    model: upstream.model,
    idleTimeoutSeconds: upstream.idleTimeoutSeconds,
    secrets: upstream.secrets,
    translates: { tools: false, responseFormat: false },
    async complete(body, signal) {
      const response = await upstream.client.responses.create({ ...request(body), stream: false }, { signal, headers: await upstream.authHeaders() });
      if (response.status === 'failed') throw new Error(`the response failed: ${response.error?.message ?? 'no reason given'}`);
      return completionOf(response.id, upstream.model, textOf(response), finishOf(response), usageOf(response));
    },
    async stream(body, signal) {
      const events = await upstream.client.responses.create({ ...request(body), stream: true }, { signal, headers: await upstream.authHeaders() });
      return relay(events, upstream.model);
    },
    classify: classifyOpenAiError,
    async contextLimit() {
      return undefined;
    },
  };
}

function inputOf(turn: ChatTurn): ResponseInputItem {
  if (turn.parts.length === 1 && turn.parts[0].type === 'text') return { role: turn.role, content: turn.parts[0].text };
  if (turn.role === 'assistant') return { role: 'assistant', content: turn.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') };
  return {
    role: turn.role,
    content: turn.parts.map((p) => (p.type === 'text' ? { type: 'input_text' as const, text: p.text } : { type: 'input_image' as const, image_url: p.url, detail: 'auto' as const })),
  };
}

function textOf(response: OpenAiResponse): string {
  return response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((c) => (c.type === 'output_text' ? c.text : ''))
    .join('');
}

function finishOf(response: OpenAiResponse): FinishReason {
  if (response.status !== 'incomplete') return 'stop';
  return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
}

/** Input tokens include cached ones and output tokens include reasoning, as in chat completions. */
function usageOf(response: OpenAiResponse) {
  const u = response.usage;
  return u ? openAiUsage(u.input_tokens, u.output_tokens, u.input_tokens_details?.cached_tokens, u.output_tokens_details?.reasoning_tokens) : undefined;
}

async function* relay(events: AsyncIterable<ResponseStreamEvent>, model: string): AsyncGenerator<StreamItem> {
  const chunks = chunkMaker(model);
  for await (const event of events) {
    switch (event.type) {
      case 'response.created':
        chunks.setId(event.response.id);
        yield { chunk: chunks.delta({ role: 'assistant', content: '' }) };
        break;
      case 'response.output_text.delta':
        yield { chunk: chunks.delta({ content: event.delta }) };
        break;
      case 'response.refusal.delta':
        yield { chunk: chunks.delta({ refusal: event.delta }) };
        break;
      case 'response.completed':
      case 'response.incomplete': {
        yield { chunk: chunks.delta({}, finishOf(event.response)) };
        const usage = usageOf(event.response);
        if (usage) yield { chunk: chunks.usage(usage) };
        return;
      }
      case 'response.failed':
        // Plain errors: ChatCompletions names the model and scrubs the text (→ 502).
        throw new Error(`the response failed: ${event.response.error?.message ?? 'no reason given'}`);
      case 'error':
        throw new Error(`the response failed: ${event.message}`);
      default:
        break;
    }
  }
}
