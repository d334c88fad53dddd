import { Controller, Param, Post, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Request, Response } from 'express';
import multer from 'multer';
import { documentView, MAX_UPLOAD_BYTES, UploadFile, UploadResult, WriteResult } from '@lib/corpora';
import { CommandContext, DomainError, invalid } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { jsonFormField, runMultipart } from '../http/form-fields';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { ChunkingStrategyDto } from './document.dto';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { OpenApi } from '../openapi/openapi.decorator';

/** The reference's `TableExtractorSpec`: the one extractor GET /v2/table_extractors lists. */
class TableExtractorDto {
  @IsIn(['structure'], { message: 'name must be "structure" (GET /v2/table_extractors lists the extractors)' }) name!: string;
}

class TableModelParametersDto {
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) max_tokens?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) frequency_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) presence_penalty?: number;
}

/** The reference's `TableGenerationSpec`: each table summarised through a registered model (docs/corpora.md). */
class TableGenerationDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) llm_name?: string;
  @IsOptional() @IsString() @MinLength(1) prompt_template?: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => TableModelParametersDto) model_parameters?: TableModelParametersDto;
}

class TableExtractionDto {
  @IsBoolean() extract_tables!: boolean;
  @IsOptional() @ValidateNested() @Type(() => TableExtractorDto) extractor?: TableExtractorDto;
  @IsOptional() @ValidateNested() @Type(() => TableGenerationDto) generation?: TableGenerationDto;
}

const FIELDS = ['metadata', 'chunking_strategy', 'table_extraction_config', 'filename'];

/** Parses the multipart body in memory; the guard has already authorised the caller. Errors are the reference API's. */
const parseMultipart = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 8, fieldSize: 1024 * 1024, parts: 10 },
}).single('file');

function multipart(req: Request, res: Response): Promise<void> {
  if (!req.is('multipart/form-data')) {
    return Promise.reject(new DomainError('unsupported_media', 'upload.not_multipart', 'The upload must be a multipart/form-data request with a "file" part'));
  }
  return runMultipart(parseMultipart, req, res, {
    tooLarge: () => new DomainError('too_large', 'upload.too_large', `The file is larger than ${MAX_UPLOAD_BYTES} bytes (10 MB)`),
    unexpectedFile: (field) => invalid('upload.unexpected_file', `Only one file, in the "file" part, may be uploaded (got "${field}")`, { [field ?? 'file']: 'unexpected file part' }),
  });
}

@Controller('v2/corpora/:corpus_key/upload_file')
export class UploadController {
  constructor(private readonly commands: CommandBus) {}

  @OpenApi({ form: { file: 'file', metadata: 'json', chunking_strategy: ChunkingStrategyDto, table_extraction_config: TableExtractionDto, filename: 'string' }, statuses: [202, 409] })
  @Post()
  @BodyLimit(20) // the file (10 MB) and its fields; also what an upload of undeclared size holds of the bodies' budget
  @Policy('corpus.write')
  async upload(@Param('corpus_key') corpusKey: string, @Req() req: Request, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    await multipart(req, res);
    const file = req.file;
    if (!file) throw invalid('request.invalid', 'The "file" part is required', { file: 'required' });
    const body = (req.body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(body).filter((k) => !FIELDS.includes(k));
    if (unknown.length) throw invalid('request.invalid', `Unknown form fields: ${unknown.join(', ')}`, Object.fromEntries(unknown.map((k) => [k, 'unknown field'])));
    const metadata = jsonFormField(body, 'metadata') ?? {};
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw invalid('request.invalid', 'metadata must be a JSON object', { metadata: 'must be a JSON object' });
    const chunkingRaw = jsonFormField(body, 'chunking_strategy');
    const chunking = chunkingRaw === undefined ? undefined : validateBody(ChunkingStrategyDto, chunkingRaw);
    const tablesRaw = jsonFormField(body, 'table_extraction_config');
    const tables = tablesRaw === undefined ? undefined : validateBody(TableExtractionDto, tablesRaw, 'table_extraction_config');
    if (tables?.generation && !tables.extract_tables) {
      throw invalid('request.invalid', 'Invalid table_extraction_config.generation: tables are summarised only when extract_tables is true', { 'table_extraction_config.generation': 'needs extract_tables: true' });
    }
    const generation = tables?.extract_tables ? tables.generation : undefined;
    // The document id is the file part's filename (Content-Disposition); a `filename` field may name it instead.
    const filename = typeof body.filename === 'string' && body.filename ? body.filename : file.originalname;
    const result: WriteResult<UploadResult> = await this.commands.execute(
      new UploadFile(
        corpusKey,
        file.buffer,
        filename,
        {
          metadata: metadata as Record<string, unknown>,
          chunking: chunking ? (chunking.type === 'max_chars_chunking_strategy' ? { type: chunking.type, maxCharsPerChunk: chunking.max_chars_per_chunk! } : { type: chunking.type }) : undefined,
          extractTables: tables?.extract_tables ?? false,
          ...(generation
            ? { tableGeneration: { llmName: generation.llm_name, promptTemplate: generation.prompt_template, sampling: { ...(generation.model_parameters ?? {}) } } }
            : {}),
        },
        ctx,
      ),
    );
    statusFor(result, 201, res);
    const { indexed, tableExtractionPages } = result.value;
    return { ...documentView(indexed.row), extraction_usage: { table_extraction_used: tableExtractionPages } };
  }
}
