import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Policy } from '../http/policy';
import { buildOpenApiDocument } from './document';
import { OpenApi } from './openapi.decorator';
import { declaredRoutes, template } from './routes';

class NoteDto {}

@Controller('v2/notes/:note_key')
class NotesController {
  @Get('items')
  @Policy('member')
  list(@Query('limit') _limit?: string, @Query('page_key') _pageKey?: string) {}

  @OpenApi({ body: NoteDto, statuses: [202, 409] })
  @Post('message\\:send')
  @HttpCode(200)
  @Policy('member')
  send(@Body() _body: unknown) {}

  @OpenApi({ like: [NotesController, 'send'], status: false })
  @Post('again')
  @Policy('public')
  again() {}
}

describe('routes read from Nest metadata', () => {
  it('turns path-to-regexp patterns into OpenAPI templates', () => {
    expect(template('/v2/agents/:agent_key/a2a/tasks/:task_id\\:cancel')).toEqual({ path: '/v2/agents/{agent_key}/a2a/tasks/{task_id}:cancel', params: ['agent_key', 'task_id'] });
    expect(template('/console/*path')).toEqual({ path: '/console/{path}', params: ['path'] });
  });

  it('reads paths, named query arguments, statuses and declarations, and `like` borrows another handler’s', () => {
    const [list, send, again] = declaredRoutes([NotesController]);
    expect(list).toMatchObject({ method: 'GET', path: '/v2/notes/{note_key}/items', pathParams: ['note_key'], queryParams: ['limit', 'page_key'], successStatus: 200, policy: 'member' });
    expect(send).toMatchObject({ method: 'POST', path: '/v2/notes/{note_key}/message:send', successStatus: 200 });
    expect(again.options).toMatchObject({ body: NoteDto, statuses: [202, 409] });
    expect(again.successStatus).toBeUndefined();
  });

  it('derives error statuses from the body, the query, the policy and the path', () => {
    const doc = buildOpenApiDocument([NotesController]);
    const ops = doc.paths;
    expect(Object.keys(ops['/v2/notes/{note_key}/items'].get.responses)).toEqual(['200', '400', '401', '403', '404']);
    expect(Object.keys(ops['/v2/notes/{note_key}/message:send'].post.responses)).toEqual(['200', '202', '400', '401', '403', '404', '409']);
    // Public, never succeeding: no 2xx, no 401/403, and no credential asked for.
    expect(Object.keys(ops['/v2/notes/{note_key}/again'].post.responses)).toEqual(['202', '400', '404', '409']);
    expect(ops['/v2/notes/{note_key}/again'].post.security).toEqual([]);
    expect(ops['/v2/notes/{note_key}/items'].get.operationId).toBe('notesList');
  });
});
