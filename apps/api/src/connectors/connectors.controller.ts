import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IsBoolean, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { ConnectorInput, Connectors, ConnectorType, ConnectorWebhooks, CONNECTOR_TYPES } from '@lib/connectors';
import { CommandContext, invalid } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { WebhookLimits } from '../http/webhook-limits';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

/** The configuration's variants are checked by the domain (`parseConfiguration`), which names each field. */
class UpdateConnectorDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsObject() configuration?: Record<string, unknown>;
}

class CreateConnectorDto {
  @IsString() @MinLength(1) @MaxLength(255) name!: string;
  @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsObject() configuration!: Record<string, unknown>;
}

/** An agent's connectors (`/v2/agents/{agent_key}/connectors`, docs/connectors.md) and their inbound webhooks. */
@Controller('v2/agents/:agent_key/connectors')
export class ConnectorsController {
  constructor(
    private readonly connectors: Connectors,
    private readonly webhooks: ConnectorWebhooks,
    private readonly limits: WebhookLimits,
  ) {}

  @OpenApi({ body: CreateConnectorDto })
  @Post()
  @Policy('agent.administer')
  async create(@Param('agent_key') agentKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const created = await this.connectors.create(agentKey, { ...validateBody(CreateConnectorDto, body) } as ConnectorInput, `${req.protocol}://${req.get('host') ?? 'localhost'}`, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('agent.administer')
  async list(@Param('agent_key') agentKey: string, @Query('type') type?: string, @Query('enabled') enabled?: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    if (type !== undefined && !CONNECTOR_TYPES.includes(type as ConnectorType)) throw invalid('connector.invalid', `Invalid type: must be one of ${CONNECTOR_TYPES.join(', ')}`, { type: 'unknown connector type' });
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('connector.invalid', 'Invalid enabled: must be true or false', { enabled: 'must be true or false' });
    return this.connectors.list(agentKey, { type: type as ConnectorType | undefined, enabled: enabled === undefined ? undefined : enabled === 'true' }, pageLimit(limit, 10, 100), pageKey);
  }

  @Get(':connector_id')
  @Policy('agent.administer')
  async get(@Param('agent_key') agentKey: string, @Param('connector_id') id: string) {
    return this.connectors.get(agentKey, id);
  }

  @OpenApi({ body: UpdateConnectorDto })
  @Patch(':connector_id')
  @Policy('agent.administer')
  async update(@Param('agent_key') agentKey: string, @Param('connector_id') id: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.connectors.update(agentKey, id, { ...validateBody(UpdateConnectorDto, body) } as ConnectorInput, ctx);
  }

  @Delete(':connector_id')
  @HttpCode(204)
  @Policy('agent.administer')
  async remove(@Param('agent_key') agentKey: string, @Param('connector_id') id: string, @Ctx() ctx: CommandContext) {
    await this.connectors.remove(agentKey, id, ctx);
  }

  /** Slack's Events API request URL (the reference's `webhook_path`). */
  @OpenApi({ freeBody: true, statuses: [401, 409, 429] })
  @Post(':connector_id/input')
  @HttpCode(200)
  @Policy('connector.webhook')
  slack(@Param('agent_key') agentKey: string, @Param('connector_id') id: string, @Req() req: Request, @Ctx() ctx: CommandContext) {
    return this.receive('slack', agentKey, id, req, ctx);
  }

  /** The Chat app's HTTP endpoint URL (its `audience_url`). */
  @OpenApi({ freeBody: true, statuses: [401, 409, 429] })
  @Post(':connector_id/gchat')
  @HttpCode(200)
  @Policy('connector.webhook')
  gchat(@Param('agent_key') agentKey: string, @Param('connector_id') id: string, @Req() req: Request, @Ctx() ctx: CommandContext) {
    return this.receive('gchat', agentKey, id, req, ctx);
  }

  /** Zoom Contact Center's bot endpoint URL. */
  @OpenApi({ freeBody: true, statuses: [401, 409, 429] })
  @Post(':connector_id/zoom')
  @HttpCode(200)
  @Policy('connector.webhook')
  zoom(@Param('agent_key') agentKey: string, @Param('connector_id') id: string, @Req() req: Request, @Ctx() ctx: CommandContext) {
    return this.receive('zoom', agentKey, id, req, ctx);
  }

  /** Failed platform authentications count against the sender's address, deliveries against the connector (429). */
  private async receive(type: ConnectorType, agentKey: string, id: string, req: Request, ctx: CommandContext) {
    const gate = await this.limits.gate(req.ip ?? 'unknown', id);
    return this.webhooks.receive(agentKey, id, type, { headers: req.headers, rawBody: req.rawBody ?? Buffer.alloc(0), body: req.body, now: ctx.now }, ctx.requestId, gate);
  }
}
