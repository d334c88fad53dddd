import { createHash } from 'node:crypto';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { notFound, SERVICE_CONFIG, ServiceConfig, unavailable } from '@lib/platform';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';
import { CONSOLE_CSP, consoleDir, consoleFile } from './console-assets';

/**
 * The web console (docs/console.md): static files built by `npm run build`. The page itself is public, as
 * any sign-in page is; everything it shows comes from `/v2/...` calls that carry the user's key or token.
 */
@Controller('console')
export class ConsoleController {
  private readonly dir: string | undefined;

  constructor(@Inject(SERVICE_CONFIG) config: ServiceConfig) {
    this.dir = consoleDir(config.env);
  }

  @OpenApi({ internal: true })
  @Get()
  @Policy('public')
  index(@Res() res: Response): void {
    this.send(res, '');
  }

  @OpenApi({ internal: true })
  @Get('*path')
  @Policy('public')
  asset(@Param('path') path: string | string[], @Res() res: Response): void {
    this.send(res, Array.isArray(path) ? path.join('/') : path);
  }

  private send(res: Response, path: string): void {
    if (!this.dir) throw unavailable('console.not_built', 'The console is not built: run `npm run build` (or `npm start`, which builds it)');
    const file = consoleFile(this.dir, path);
    if (!file) throw notFound('console.not_found', `No console file ${path}`, path);
    res
      .status(200)
      .set({
        'content-type': file.type,
        'content-security-policy': CONSOLE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // Fixed file names: the browser revalidates (Express answers 304 when its If-None-Match is this ETag), so
        // a new build is seen at once.
        'cache-control': 'no-cache',
        etag: `"${createHash('sha1').update(file.body).digest('base64url')}"`,
      })
      .send(file.body);
  }
}
