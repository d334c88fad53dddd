import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { CreateAppClient, DeleteAppClient, GetAppClient, ListAppClients, Principal, UpdateAppClient } from '@lib/auth';
import { CommandContext, listFilter } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CreateAppClientDto, grantsOf, UpdateAppClientDto } from './auth.dto';
import { OpenApi } from '../openapi/openapi.decorator';

@Controller('v2/app_clients')
export class AppClientsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** `client_secret` is in this response only. */
  @OpenApi({ body: CreateAppClientDto, statuses: [202] })
  @Post()
  @Policy('clients.manage')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateAppClientDto, body);
    const result = await this.commands.execute(new CreateAppClient({ name: dto.name, description: dto.description ?? '', grants: grantsOf(dto) }, caller, ctx));
    statusFor(result, 201, res);
    return result.view;
  }

  @Get()
  @Policy('clients.manage')
  list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string) {
    const regex = listFilter(filter);
    return this.queries.execute(new ListAppClients(pageLimit(limit, 10, 100), pageKey, regex));
  }

  @Get(':app_client_id')
  @Policy('clients.manage')
  get(@Param('app_client_id') id: string) {
    return this.queries.execute(new GetAppClient(id));
  }

  @OpenApi({ body: UpdateAppClientDto, statuses: [202] })
  @Patch(':app_client_id')
  @Policy('clients.manage')
  async update(@Param('app_client_id') id: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(UpdateAppClientDto, body);
    const rolesGiven = dto.api_roles !== undefined || dto.corpus_roles !== undefined || dto.agent_roles !== undefined;
    const current = rolesGiven ? await this.queries.execute(new GetAppClient(id)) : undefined;
    const grants = current
      ? grantsOf({ api_roles: dto.api_roles ?? current.api_roles, corpus_roles: dto.corpus_roles ?? current.corpus_roles, agent_roles: dto.agent_roles ?? current.agent_roles } as UpdateAppClientDto)
      : undefined;
    statusFor(await this.commands.execute(new UpdateAppClient(id, { name: dto.name, description: dto.description, grants }, caller, ctx)), 200, res);
    return this.queries.execute(new GetAppClient(id));
  }

  @OpenApi({ statuses: [202] })
  @Delete(':app_client_id')
  @Policy('clients.manage')
  @HttpCode(204)
  async remove(@Param('app_client_id') id: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteAppClient(id, caller, ctx)), 204, res);
  }
}
