import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { WebhookInput, Webhooks, WEBHOOK_EVENT_TYPES } from '@lib/webhooks';
import { CommandContext, invalid } from '@lib/platform';
import { KEY_PATTERN } from '../agents/agents.dto';
import { pageLimit } from '../http/paging';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';

const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'];

class UpdateWebhookDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(2048) url?: string;
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length) @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: `each value in event_types must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }) event_types?: string[];
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  /** null: every agent's session events again. */
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(50, { each: true }) @Matches(KEY_PATTERN, { each: true, message: 'each value in agent_keys must be an agent key' }) agent_keys?: string[] | null;
  @IsOptional() @IsBoolean() enabled?: boolean;
}

class CreateWebhookDto {
  @IsString() @MinLength(1) @MaxLength(2048) url!: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length) @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: `each value in event_types must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }) event_types!: string[];
  @IsOptional() @IsString() @MaxLength(1000) description?: string;
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(50, { each: true }) @Matches(KEY_PATTERN, { each: true, message: 'each value in agent_keys must be an agent key' }) agent_keys?: string[];
  @IsOptional() @IsBoolean() enabled?: boolean;
}

/**
 * Webhooks (`/v2/webhooks`, docs/webhooks.md): account-wide, so administrators only (owner, administrator: the
 * `webhook.manage` policy). A webhook sends what happens in every agent, pipeline and schedule to a URL outside.
 */
@Controller('v2/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: Webhooks) {}

  @OpenApi({ body: CreateWebhookDto })
  @Post()
  @Policy('webhook.manage')
  async create(@Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const created = await this.webhooks.create({ ...validateBody(CreateWebhookDto, body) } as WebhookInput, ctx);
    res.status(201);
    return created;
  }

  @Get()
  @Policy('webhook.manage')
  list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.webhooks.list(pageLimit(limit, 10, 100), pageKey);
  }

  @Get(':webhook_id')
  @Policy('webhook.manage')
  get(@Param('webhook_id') id: string) {
    return this.webhooks.get(id);
  }

  @OpenApi({ body: UpdateWebhookDto })
  @Patch(':webhook_id')
  @Policy('webhook.manage')
  update(@Param('webhook_id') id: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.webhooks.update(id, { ...validateBody(UpdateWebhookDto, body) } as WebhookInput, ctx);
  }

  @Delete(':webhook_id')
  @HttpCode(204)
  @Policy('webhook.manage')
  async remove(@Param('webhook_id') id: string, @Ctx() ctx: CommandContext) {
    await this.webhooks.remove(id, ctx);
  }

  @Get(':webhook_id/deliveries')
  @Policy('webhook.manage')
  deliveries(@Param('webhook_id') id: string, @Query('status') status?: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    if (status !== undefined && !DELIVERY_STATUSES.includes(status)) throw invalid('request.invalid', `Invalid status: must be one of ${DELIVERY_STATUSES.join(', ')}`, { status: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
    return this.webhooks.deliveries(id, { status }, pageLimit(limit, 10, 100), pageKey);
  }

  @Post(':webhook_id/deliveries/:delivery_id/redeliver')
  @HttpCode(202)
  @Policy('webhook.manage')
  redeliver(@Param('webhook_id') id: string, @Param('delivery_id') deliveryId: string, @Ctx() ctx: CommandContext) {
    return this.webhooks.redeliver(id, deliveryId, ctx);
  }
}
