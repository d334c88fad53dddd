import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { CreateApiKey, DeleteApiKey, GetApiKey, Grants, KeyType, ListApiKeys, Principal, SetApiKeyEnabled } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CreateApiKeyDto, grantsOf, UpdateApiKeyDto } from './auth.dto';
import { OpenApi } from '../openapi/openapi.decorator';

const KEY_TYPES: readonly KeyType[] = ['personal', 'serving', 'serving_and_indexing'];

/**
 * The reference API's two ways to say what a key may do, made one: `api_key_role` with `corpus_keys` (QueryService
 * keys view, IndexService keys edit the named corpora, or every corpus when none are named), or explicit role lists.
 */
function keyOf(dto: CreateApiKeyDto): { keyType: KeyType; grants: Grants } {
  const explicit = grantsOf(dto);
  const hasRoles = explicit.apiRoles.length + explicit.corpusRoles.length + explicit.agentRoles.length > 0;
  const legacy = dto.corpus_keys ?? [];
  if (dto.api_key_role === 'personal') {
    if (legacy.length) throw invalid('api_key.invalid', 'A personal key carries its owner\'s roles: omit corpus_keys', { corpus_keys: 'not allowed for personal keys' });
    return { keyType: 'personal', grants: explicit };
  }
  if (!dto.api_key_role && !hasRoles) {
    throw invalid('api_key.invalid', 'Say what the key may do: api_key_role, or api_roles / corpus_roles / agent_roles', { api_key_role: 'required when no roles are given' });
  }
  const keyType: KeyType =
    dto.api_key_role ?? (explicit.apiRoles.some((r) => r !== 'corpus_viewer' && r !== 'viewer') || explicit.corpusRoles.some((r) => r.role !== 'viewer') ? 'serving_and_indexing' : 'serving');
  const corpusRole = keyType === 'serving' ? 'viewer' : 'editor';
  const corpusRoles = [...explicit.corpusRoles, ...legacy.map((corpusKey) => ({ corpusKey, role: corpusRole }) as const)];
  const apiRoles = !hasRoles && legacy.length === 0 ? [keyType === 'serving' ? 'corpus_viewer' : 'corpus_developer'] as const : explicit.apiRoles;
  return { keyType, grants: { apiRoles: [...apiRoles], corpusRoles, agentRoles: explicit.agentRoles } };
}

@Controller('v2/api_keys')
export class ApiKeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** The full key (`secret_key`) is in this response only; it is never shown again. */
  @OpenApi({ body: CreateApiKeyDto, statuses: [202] })
  @Post()
  @Policy('keys.own')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateApiKeyDto, body);
    const result = await this.commands.execute(new CreateApiKey({ name: dto.name, ...keyOf(dto) }, caller, ctx));
    statusFor(result, 201, res);
    return result.view;
  }

  @Get()
  @Policy('keys.own')
  list(
    @Caller() caller: Principal,
    @Query('limit') limit?: string,
    @Query('page_key') pageKey?: string,
    @Query('api_key_role') role?: string,
    @Query('corpus_key') corpusKey?: string,
  ) {
    if (role !== undefined && !KEY_TYPES.includes(role as KeyType)) {
      throw invalid('request.invalid', 'api_key_role must be one of serving, serving_and_indexing, personal', { api_key_role: 'must be serving, serving_and_indexing or personal' });
    }
    return this.queries.execute(new ListApiKeys(caller, pageLimit(limit, 10, 100), pageKey, role as KeyType | undefined, corpusKey));
  }

  @Get(':api_key_id')
  @Policy('keys.own')
  get(@Param('api_key_id') id: string, @Caller() caller: Principal) {
    return this.queries.execute(new GetApiKey(id, caller));
  }

  /** Only `enabled` changes, as in the reference API. */
  @OpenApi({ body: UpdateApiKeyDto, statuses: [202, 409] })
  @Patch(':api_key_id')
  @Policy('keys.own')
  async update(@Param('api_key_id') id: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    await this.queries.execute(new GetApiKey(id, caller)); // 404 for a key the caller may not see, before validating
    const dto = validateBody(UpdateApiKeyDto, body);
    statusFor(await this.commands.execute(new SetApiKeyEnabled(id, dto.enabled, caller, ctx)), 200, res);
    return this.queries.execute(new GetApiKey(id, caller));
  }

  @OpenApi({ statuses: [202, 409] })
  @Delete(':api_key_id')
  @Policy('keys.own')
  @HttpCode(204)
  async remove(@Param('api_key_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteApiKey(id, caller, ctx)), 204, res);
  }
}
