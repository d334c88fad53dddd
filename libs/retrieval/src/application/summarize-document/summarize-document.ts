import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChatCompletions, ChatRequest } from '@lib/llms';
import { CommandContext, READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound, documentNotFound } from '@lib/corpora';
import { CORPORA, documentReadId, DOCUMENTS, DocumentRow } from '@lib/corpora/read-models';
import { GenerationModels } from '../model/generation-models';
import { summaryPrompt } from './document-prompt';

/** Sampling settings a summary request may give (`model_parameters`), checked at the edge. */
export type SummarySampling = Readonly<Partial<Record<'max_tokens' | 'temperature' | 'top_p' | 'frequency_penalty' | 'presence_penalty', number>>>;

/** Summarise one stored document through a registered model (`POST .../documents/{id}/summarize`). */
export class SummarizeDocument {
  constructor(
    readonly corpusKey: string,
    readonly documentId: string,
    readonly llmName: string,
    readonly promptTemplate: string | undefined,
    readonly sampling: SummarySampling,
    readonly ctx: CommandContext,
    readonly signal?: AbortSignal,
  ) {}
}

/** The same, streamed as the reference's `SummarizeDocumentStreamedResponse` events (its own class: the query bus dispatches by class). */
export class StreamSummarizeDocument {
  constructor(readonly request: SummarizeDocument) {}
}

/** The reference's `SummarizeDocumentResponse`. */
export interface DocumentSummary {
  readonly summary: string;
  readonly rendered_prompt: string;
}

export type SummaryStreamEvent =
  | { readonly type: 'generation_chunk'; readonly generation_chunk: string }
  | { readonly type: 'generation_info'; readonly rendered_prompt: string }
  | { readonly type: 'generation_end' }
  | { readonly type: 'end' };

/** Everything that can fail as a plain 4xx, before the model is called: the corpus, the document, the model, the template. */
async function prepare(reads: ReadStore, models: GenerationModels, q: SummarizeDocument): Promise<{ request: ChatRequest; renderedPrompt: string }> {
  if (!(await reads.get(CORPORA, q.corpusKey))) throw corpusNotFound(q.corpusKey);
  const row = await reads.get<DocumentRow>(DOCUMENTS, documentReadId(q.corpusKey, q.documentId));
  if (!row) throw documentNotFound(q.corpusKey, q.documentId);
  const model = await models.resolve(q.llmName, 'llm_name');
  const prompt = summaryPrompt(row, q.promptTemplate, 'prompt_template');
  return { request: { model, messages: prompt.messages, ...q.sampling }, renderedPrompt: prompt.text };
}

/** One model call through the registry's chat path, so quotas apply and usage is recorded as for any call. */
@QueryHandler(SummarizeDocument)
export class SummarizeDocumentHandler implements IQueryHandler<SummarizeDocument, DocumentSummary> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly models: GenerationModels,
    private readonly chat: ChatCompletions,
  ) {}

  async execute(q: SummarizeDocument): Promise<DocumentSummary> {
    const { request, renderedPrompt } = await prepare(this.reads, this.models, q);
    const completion = await this.chat.complete(request, q.ctx, q.signal);
    return { summary: completion.choices[0]?.message?.content ?? '', rendered_prompt: renderedPrompt };
  }
}

/**
 * Resolves once the model has accepted the call (so a refused call is a plain JSON error); then the chunks,
 * `generation_info` (the rendered prompt), `generation_end` and `end`.
 */
@QueryHandler(StreamSummarizeDocument)
export class StreamSummarizeDocumentHandler implements IQueryHandler<StreamSummarizeDocument, AsyncIterable<SummaryStreamEvent>> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly models: GenerationModels,
    private readonly chat: ChatCompletions,
  ) {}

  async execute(q: StreamSummarizeDocument): Promise<AsyncIterable<SummaryStreamEvent>> {
    const { request, renderedPrompt } = await prepare(this.reads, this.models, q.request);
    const chunks = await this.chat.stream(request, q.request.ctx, q.request.signal);
    return (async function* (): AsyncGenerator<SummaryStreamEvent> {
      for await (const chunk of chunks) {
        const piece = chunk.choices.map((c) => c.delta?.content ?? '').join('');
        if (piece) yield { type: 'generation_chunk', generation_chunk: piece };
      }
      yield { type: 'generation_info', rendered_prompt: renderedPrompt };
      yield { type: 'generation_end' };
      yield { type: 'end' };
    })();
  }
}
