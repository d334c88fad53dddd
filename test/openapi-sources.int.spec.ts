import { join } from 'node:path';
import { controllerFiles, handlersOf, mismatches } from './support/controller-sources';

/**
 * The OpenAPI document is built from route metadata plus what each handler's `@OpenApi` declares (docs/openapi.md).
 * This reads the controllers' source with the TypeScript compiler and checks the declarations against the code:
 * the DTOs a handler passes to validateBody (or checkDto, in it or the helpers it calls), a statusFor (202), a whole
 * `@Query()`, a POST that writes its own response. A declaration that no longer says what the code does fails here.
 */
describe('the OpenAPI declarations against the handlers’ code', () => {
  const handlers = controllerFiles(join(__dirname, '..', 'apps', 'api', 'src')).flatMap((f) => handlersOf(f));

  it('reads every handler', () => {
    expect(handlers.length).toBeGreaterThan(220);
    expect(handlers.filter((h) => h.validated.length).length).toBeGreaterThan(60);
  });

  it('every handler’s @OpenApi says what its code validates and answers', () => {
    expect(handlers.flatMap(mismatches)).toEqual([]);
  });

  it('names the handler when its declaration and its code part', () => {
    const source = `
      @Controller('v2/things')
      export class ThingsController {
        @OpenApi({ body: OldThingDto })
        @Post()
        @Policy('member')
        async create(@Body() body: unknown, @Res({ passthrough: true }) res: Response) {
          const dto = this.parse(body);
          statusFor(await this.commands.execute(dto), 201, res);
        }
        @Get()
        @Policy('member')
        list(@Query() q: Params) { return q; }
        @Post(':id/run')
        @Policy('member')
        run(@Res() res: Response) { res.status(200).end(); }
        private parse(body: unknown) { return validateBody(ThingDto, body); }
      }`;
    expect(handlersOf('things.controller.ts', source).flatMap(mismatches)).toEqual([
      'ThingsController.create (things.controller.ts:7) validates [ThingDto] but its @OpenApi names [OldThingDto]',
      'ThingsController.create (things.controller.ts:7) answers 202 (statusFor) but its @OpenApi does not list it',
      'ThingsController.list (things.controller.ts:13) reads the whole query but its @OpenApi names no query parameters',
      'ThingsController.run (things.controller.ts:16) writes its own response: its @OpenApi must say its success status',
    ]);
  });
});
