import { Body, Controller, Get, Inject, Post, Query, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { ENCODER_REGISTRY, EncoderDescriptor, EncoderRegistry } from '@lib/encoders';
import { CreateEncoder, EncoderInput, EncoderRow } from '@lib/llms';
import { CommandContext, invalid, listFilter, WriteResult } from '@lib/platform';
import { hasUrlCredentials } from '@lib/platform/kernel';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { toAuth } from '../llms/llm-input';
import { CreateEncoderDto, ENDPOINT_ONLY_FIELDS, ONNX_ONLY_FIELDS } from './encoder.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** The encoders this service can embed with (`GET /v2/encoders`) and registered endpoints (`POST`), in the reference API's shape. */
@Controller('v2/encoders')
export class EncodersController {
  constructor(
    @Inject(ENCODER_REGISTRY) private readonly registry: EncoderRegistry,
    private readonly commands: CommandBus,
  ) {}

  /** The reference allows corpus_viewer … owner, the same callers as the LLM list: `llm.use` says exactly that. */
  @Get()
  @Policy('llm.use')
  async list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string): Promise<{ encoders: EncoderDescriptor[]; metadata: { page_key?: string } }> {
    const regex = listFilter(filter);
    const size = pageLimit(limit, 10, 100);
    const offset = offsetOfPageKey(pageKey);
    const all = (await this.registry.listAll()).filter((e) => !regex || regex.test(e.name) || regex.test(e.description));
    const encoders = all.slice(offset, offset + size);
    return { encoders, metadata: offset + size < all.length ? { page_key: offsetPageKey(offset + size) } : {} };
  }

  /** Registers an OpenAI-compatible embeddings endpoint or an in-process ONNX model (docs/encoders.md); administrator and owner, as the reference. */
  @OpenApi({ body: CreateEncoderDto, statuses: [202] })
  @Post()
  @Policy('llm.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response): Promise<EncoderDescriptor> {
    const dto = validateBody(CreateEncoderDto, body);
    const foreign = (dto.type === 'onnx' ? ENDPOINT_ONLY_FIELDS : ONNX_ONLY_FIELDS).filter((f) => dto[f] !== undefined);
    if (foreign.length > 0) {
      const other = dto.type === 'onnx' ? 'openai-compatible' : 'onnx';
      throw invalid('request.invalid', `${foreign.join(', ')}: only for type "${other}"`, Object.fromEntries(foreign.map((f) => [f, `only for type "${other}"`])));
    }
    const input = dto.type === 'onnx' ? onnxInput(dto) : endpointInput(dto);
    const result: WriteResult<EncoderRow> = await this.commands.execute(new CreateEncoder(input, ctx));
    statusFor(result, 201, res);
    const r = result.value;
    return { id: r.id, name: r.name, type: r.type, output_dimensions: r.output_dimensions, description: r.description, default: false, enabled: r.enabled, image_encoding: false };
  }
}

function endpointInput(dto: CreateEncoderDto): EncoderInput {
  const uri = dto.uri!;
  if (!/^https?:\/\/[^/\s]+/i.test(uri)) throw invalid('request.invalid', 'Invalid uri: must be an http or https URL', { uri: 'must be an http or https URL' });
  if (hasUrlCredentials(uri)) throw invalid('request.invalid', 'Invalid uri: credentials go in auth, not in the URL', { uri: 'must not carry credentials' });
  return { type: 'openai-compatible', name: dto.name, description: dto.description, uri, model: dto.model!, outputDimensions: dto.output_dimensions, auth: dto.auth ? toAuth(dto.auth) : undefined };
}

function onnxInput(dto: CreateEncoderDto): EncoderInput {
  const overrides = { pooling: dto.pooling, queryPrefix: dto.query_prefix, documentPrefix: dto.document_prefix, maxTokens: dto.max_tokens };
  return { type: 'onnx', name: dto.name, description: dto.description, modelDir: dto.model_dir, model: dto.model, file: dto.file, overrides, outputDimensions: dto.output_dimensions };
}
