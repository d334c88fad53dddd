import { SetMetadata } from '@nestjs/common';

export const BODY_LIMIT = 'route:json_body_bytes';

const MB = 1024 * 1024;

/**
 * What an authenticated JSON body may hold on a route that declares nothing else: queries and configuration
 * (agents, tools, pipelines, keys…), whose fields are bounded far below it. Parsing 1 MB takes the event loop
 * ~25 ms here; 50 MB took it ~1 s, reachable by any key on any route before (docs/security.md, "Body bounds per
 * route").
 */
export const DEFAULT_JSON_BODY_BYTES = MB;

/**
 * A route that carries content (documents, model inputs, session messages) takes JSON bodies up to `mb` MB after
 * decompression; the guard reads it after deciding the caller may use the route, wherever the policy allows.
 */
export const BodyLimit = (mb: number) => SetMetadata(BODY_LIMIT, mb * MB);
