import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { IsBoolean, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { DocumentSummary, StreamSummarizeDocument, SummarizeDocument, SummaryStreamEvent } from '@lib/retrieval';
import { CallerAborted } from '@lib/llms';
import { CommandContext } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { writeQueryStream } from './query-stream';
import { OpenApi } from '../openapi/openapi.decorator';

/** The sampling settings a summary takes; any other key is refused (400 naming it), never dropped. */
class SummaryModelParametersDto {
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) max_tokens?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) frequency_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) presence_penalty?: number;
}

/** The reference's `SummarizeDocumentRequest`. */
class SummarizeDocumentDto {
  @IsString() @MinLength(1) @MaxLength(200) llm_name!: string;
  @IsOptional() @IsString() @MinLength(1) prompt_template?: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SummaryModelParametersDto) model_parameters?: SummaryModelParametersDto;
  @IsOptional() @IsBoolean() stream_response?: boolean;
}

@Controller('v2/corpora/:corpus_key/documents/:document_id/summarize')
export class SummarizeController {
  constructor(private readonly queries: QueryBus) {}

  /**
   * One document summarised by a registered model (docs/generation.md). Anything that fails before the model has
   * accepted the call is a plain JSON error; a streamed failure after that is an `error` event, then `end`.
   */
  @OpenApi({ body: SummarizeDocumentDto, stream: true, status: 200 })
  @Post()
  @Policy('corpus.read')
  async summarize(@Param('corpus_key') corpusKey: string, @Param('document_id') documentId: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res() res: Response): Promise<void> {
    const dto = validateBody(SummarizeDocumentDto, body);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const request = new SummarizeDocument(corpusKey, documentId, dto.llm_name, dto.prompt_template, { ...(dto.model_parameters ?? {}) }, ctx, abort.signal);
    try {
      if (dto.stream_response) {
        const events: AsyncIterable<SummaryStreamEvent> = await this.queries.execute(new StreamSummarizeDocument(request));
        await writeQueryStream(res, events, ctx.requestId);
        return;
      }
      const summary: DocumentSummary = await this.queries.execute(request);
      res.status(200).json(summary);
    } catch (e) {
      if (e instanceof CallerAborted || res.destroyed) return void res.end();
      throw e;
    }
  }
}
