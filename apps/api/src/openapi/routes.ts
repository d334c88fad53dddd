import { HttpStatus, RequestMethod } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { POLICY } from '../http/policy';
import { OPENAPI, OpenApiOptions } from './openapi.decorator';

/** One route as the controllers declare it, read from Nest's metadata (nothing is called). */
export interface DeclaredRoute {
  /** `Class.method` of the handler. */
  readonly handler: string;
  readonly controller: string;
  readonly method: string;
  /** OpenAPI path template: `/v2/corpora/{corpus_key}`. */
  readonly path: string;
  readonly pathParams: readonly string[];
  /** Named `@Query('x')` arguments and the decorator's whole-query names. */
  readonly queryParams: readonly string[];
  /** Undefined: the route never succeeds (`@OpenApi({ status: false })`). */
  readonly successStatus: number | undefined;
  readonly policy: string | undefined;
  readonly options: OpenApiOptions;
}

type Controller = Function & { prototype: Record<string, unknown> };

/** Every route of the controllers, in declaration order. */
export function declaredRoutes(controllers: readonly Function[]): DeclaredRoute[] {
  const routes: DeclaredRoute[] = [];
  for (const cls of controllers as readonly Controller[]) {
    const base = String(Reflect.getMetadata(PATH_METADATA, cls) ?? '');
    for (const name of Object.getOwnPropertyNames(cls.prototype)) {
      const handler = cls.prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (verb === undefined) continue;
      const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
      const pattern = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/');
      const { path, params } = template(pattern);
      const method = RequestMethod[verb];
      const options = optionsOf(handler);
      routes.push({
        handler: `${cls.name}.${name}`,
        controller: cls.name,
        method,
        path,
        pathParams: params,
        queryParams: [...new Set([...namedQueryArgs(cls, name), ...(options.query ?? [])])],
        successStatus: options.status === false ? undefined : ((Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? options.status ?? (method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK)),
        policy: Reflect.getMetadata(POLICY, handler) as string | undefined,
        options,
      });
    }
  }
  return routes;
}

/**
 * A path-to-regexp pattern as an OpenAPI template: `:name` → `{name}`, `\:` (a literal colon, A2A's
 * `message:send`) → `:`, `*name` (a wildcard) → `{name}`.
 */
export function template(pattern: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = pattern.replace(/\\:|[:*]([A-Za-z_][A-Za-z0-9_]*)/g, (m, name: string | undefined) => {
    if (m === '\\:') return ':';
    params.push(name as string);
    return `{${name}}`;
  });
  return { path, params };
}

/** The names of a handler's `@Query('name')` arguments (Nest keys them `<type>:<index>`). */
function namedQueryArgs(cls: Function, method: string): string[] {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, method) ?? {}) as Record<string, { data?: unknown }>;
  return Object.entries(args)
    .filter(([key, arg]) => key.startsWith(`${RouteParamtypes.QUERY}:`) && typeof arg.data === 'string')
    // Decorators apply last argument first: the argument's index puts them back in the handler's order.
    .sort(([a], [b]) => Number(a.split(':')[1]) - Number(b.split(':')[1]))
    .map(([, arg]) => arg.data as string);
}

/** The handler's `@OpenApi` options, those of the handler it is `like` under its own. */
function optionsOf(handler: unknown): OpenApiOptions {
  const own = (Reflect.getMetadata(OPENAPI, handler as object) as OpenApiOptions | undefined) ?? {};
  if (!own.like) return own;
  const [cls, method] = own.like;
  const { like: _like, ...rest } = own;
  return { ...optionsOf((cls as Controller).prototype[method]), ...rest };
}
