import { SetMetadata } from '@nestjs/common';

export const OPENAPI = 'route:openapi';

/** A class-validator DTO class, as `validateBody` takes it. */
export type DtoClass = new () => object;

export type FormField = DtoClass | 'file' | 'files' | 'string' | 'json';

/**
 * What the OpenAPI document says of a route that Nest's own metadata cannot tell (docs/openapi.md). The rest (path,
 * method, path and named query parameters, success status, 400/401/403/404) is derived, so only this is declared,
 * and test/openapi-sources.int.spec.ts checks it against what the handler's code does.
 */
export interface OpenApiOptions {
  /** The DTO(s) `validateBody` checks the JSON body against; several: the body is one of them. */
  readonly body?: DtoClass | readonly DtoClass[];
  /**
   * A multipart upload (`multipart/form-data`): its fields, each a file, several files, a string, free JSON, or JSON
   * validated with a DTO (OpenAPI encodes an object-valued part as application/json).
   */
  readonly form?: Readonly<Record<string, FormField>>;
  /** A body the handler takes as it comes (free-form JSON, checked by hand, or a platform's webhook payload). */
  readonly freeBody?: true;
  /** Query parameters of a handler that reads the whole query (`@Query() q`). */
  readonly query?: readonly string[];
  /**
   * The success status of a handler that writes its own response (`@Res()`), where Nest's default (201 for POST) is
   * not what it answers; `false`: the route never succeeds (it says why in its error).
   */
  readonly status?: number | false;
  /** Statuses it answers besides the derived ones: 202 (a write whose projections lag), 409, 422, 503 … */
  readonly statuses?: readonly number[];
  /** Not part of the API (the console's pages): left out of the document. */
  readonly internal?: true;
  /** The route serves as another handler does (a route that hands its request on): that handler's description. */
  readonly like?: readonly [Function, string];
  /** The success answer is a server-sent event stream (or JSON, by the request). */
  readonly stream?: true;
}

/** Declares a route's body, whole-query parameters and extra statuses for the OpenAPI document. */
export const OpenApi = (options: OpenApiOptions) => SetMetadata(OPENAPI, options);
