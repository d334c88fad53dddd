import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ENCODER_REGISTRY, EncoderRegistry, NO_ENCODER } from '@lib/encoders';
import { CommandContext, DomainError, runInSlices, StreamWriter, yieldToLoop } from '@lib/platform';
import { CorpusSettings, corpusFold, requireActiveCorpus } from '../../domain/corpus';
import { decideIndexDocument, DocumentContent, documentContentSteps, DocumentInput, documentFold, DocumentStats } from '../../domain/document';
import { DocumentEmbedding, embeddingText, encodeVector } from '../../domain/embedding';
import { documentRow, DocumentRow } from '../../read-models';
import { corpusStream, documentStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';
import { requireUnchangedCorpus } from '../incarnation';

/** What was indexed: its stats and the read-model row it makes (for a response that must not wait for the projection). */
export interface IndexedDocument {
  readonly stats: DocumentStats;
  readonly row: DocumentRow;
}

export class IndexDocument {
  constructor(
    readonly corpusKey: string,
    readonly input: DocumentInput,
    /** `searchable` waits for the search index; `indexed` returns once the event is durably stored. */
    readonly waitFor: 'searchable' | 'indexed',
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(IndexDocument)
export class IndexDocumentHandler implements ICommandHandler<IndexDocument, WriteResult<IndexedDocument>> {
  constructor(
    private readonly writer: StreamWriter,
    @Inject(ENCODER_REGISTRY) private readonly encoders: EncoderRegistry,
  ) {}

  async execute(cmd: IndexDocument): Promise<WriteResult<IndexedDocument>> {
    const decided = await this.writer.stateWithRevision(corpusStream(cmd.corpusKey), corpusFold);
    const corpus = requireActiveCorpus(decided.state, cmd.corpusKey);
    // Checked and embedded before the write: a document that fails either leaves nothing behind. Chunked in slices
    // of the loop (50,000 one-line sections took ~0.5 s of the sentence segmenter).
    const content = await runInSlices(documentContentSteps(cmd.input));
    // Chunking, embedding and the append each hold the loop for a while on a large document: turns between.
    await yieldToLoop();
    const embedding = await this.embed(corpus.settings, cmd.input, content);
    await yieldToLoop();
    const { events, position, visible } = await this.writer.write(
      documentStream(corpus.corpusId, cmd.input.id, corpus.epoch),
      documentFold,
      (state) => decideIndexDocument(state, { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, input: cmd.input, content, embedding }, cmd.ctx.now),
      cmd.ctx,
      cmd.waitFor === 'indexed' ? [] : DOCUMENT_WRITE_VISIBILITY,
    );
    await requireUnchangedCorpus(this.writer, cmd.corpusKey, decided);
    const indexed = events[0];
    if (indexed?.type !== 'DocumentIndexed') throw new Error(`Indexing ${cmd.input.id} appended ${indexed?.type ?? 'nothing'}`);
    return { value: { stats: indexed.data.stats, row: documentRow(indexed.data) }, position, visible };
  }

  /** The parts' vectors from the corpus's encoder; none for a lexical-only corpus or one created before encoders. */
  private async embed(settings: CorpusSettings, input: DocumentInput, content: DocumentContent): Promise<DocumentEmbedding | undefined> {
    if (!settings.encoderName || settings.encoderName === NO_ENCODER) return undefined;
    const encoder = await this.encoders.lookup(settings.encoderName);
    if (!encoder) {
      throw new DomainError('unavailable', 'encoder.not_configured', `The corpus's encoder "${settings.encoderName}" is not configured on this service (GET /v2/encoders lists those that are)`);
    }
    const title = input.type === 'structured' ? input.title : undefined;
    const vectors = await encoder.encode(content.parts.map((p) => embeddingText(p, title)), 'document');
    return { encoder: encoder.name, dimensions: encoder.dimensions, vectors: vectors.map(encodeVector) };
  }
}
