import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { CreateUser, DeleteUser, GetUser, ListUsers, Principal, UpdateUser } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CreateUserDto, grantsOf, UpdateUserDto } from './auth.dto';
import { OpenApi } from '../openapi/openapi.decorator';

@Controller('v2/users')
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Response: the user, plus `api_key`, the user's first personal key, shown this once. */
  @OpenApi({ body: CreateUserDto, statuses: [202] })
  @Post()
  @Policy('users.manage')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateUserDto, body);
    const username = dto.username ?? dto.email;
    const result = await this.commands.execute(new CreateUser({ username, email: dto.email, description: dto.description ?? '', grants: grantsOf(dto) }, caller, ctx));
    statusFor(result, 201, res);
    const user = result.visible ? await this.queries.execute(new GetUser(username)) : { username, email: dto.email };
    // Shown once: the user's first personal key (users authenticate with keys; there are no passwords).
    return { ...user, api_key: result.apiKey };
  }

  @Get()
  @Policy('users.manage')
  list(@Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('corpus_key') corpusKey?: string) {
    return this.queries.execute(new ListUsers(pageLimit(limit, 10, 100), pageKey, corpusKey));
  }

  @Get(':username')
  @Policy('users.read')
  get(@Param('username') username: string) {
    return this.queries.execute(new GetUser(username));
  }

  @OpenApi({ body: UpdateUserDto, statuses: [202, 409] })
  @Patch(':username')
  @Policy('users.manage')
  async update(@Param('username') username: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(UpdateUserDto, body);
    const rolesGiven = dto.api_roles !== undefined || dto.corpus_roles !== undefined || dto.agent_roles !== undefined;
    const current = rolesGiven ? await this.queries.execute(new GetUser(username)) : undefined;
    // Lists left out keep their current value: PATCH replaces only the role lists it names.
    const grants = current ? grantsOf({ api_roles: dto.api_roles ?? current.api_roles, corpus_roles: dto.corpus_roles ?? current.corpus_roles, agent_roles: dto.agent_roles ?? current.agent_roles }) : undefined;
    const result = await this.commands.execute(new UpdateUser(username, { enabled: dto.enabled, description: dto.description, grants }, caller, ctx));
    statusFor(result, 200, res);
    return this.queries.execute(new GetUser(username));
  }

  /**
   * The reference resets a password by e-mail. Users here have no password (they authenticate with API keys) and
   * the service sends no e-mail: after checking the user exists (404 otherwise, as the reference), the answer is a
   * 400 that says what to do instead (docs/auth.md).
   */
  @OpenApi({ status: false })
  @Post(':username/reset_password')
  @Policy('users.manage')
  async resetPassword(@Param('username') username: string) {
    await this.queries.execute(new GetUser(username));
    throw invalid('user.no_password', `User "${username}" has no password to reset: users of this service authenticate with API keys. Disable a lost key with PATCH /v2/api_keys/{id} {"enabled": false}; the user makes a new personal key with POST /v2/api_keys using another key, or an administrator deletes and re-creates the user to issue a new first key`, { username: 'has no password' });
  }

  @OpenApi({ statuses: [202, 409] })
  @Delete(':username')
  @Policy('users.manage')
  @HttpCode(204)
  async remove(@Param('username') username: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteUser(username, caller, ctx)), 204, res);
  }
}
