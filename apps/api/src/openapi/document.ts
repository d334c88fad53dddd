import { POLICIES, PolicyName } from '@lib/auth';
import { dtoSchemas, Schema, SCHEMA_PREFIX } from './dto-schemas';
import type { DtoClass, FormField } from './openapi.decorator';
import { REFERENCE_OPERATION_IDS } from './reference-operation-ids';
import { DeclaredRoute, declaredRoutes } from './routes';

/** The OpenAPI 3.0 document, as JSON. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: Record<string, unknown>;
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Schema> };
  readonly security: Record<string, string[]>[];
}

export interface Operation {
  readonly operationId: string;
  readonly tags: string[];
  readonly parameters: { name: string; in: 'path' | 'query'; required: boolean; schema: Schema }[];
  readonly requestBody?: Schema;
  readonly responses: Record<string, Schema>;
  readonly security?: [];
  readonly 'x-policy'?: string;
}

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: stored durably, not yet visible to reads (header x-read-your-writes: pending)',
  204: 'No content',
  400: 'Invalid request: a parameter or the body is malformed (field_errors names the fields)',
  401: 'No valid credential',
  403: 'The credential may not do this',
  404: 'Not found (or not visible to this credential)',
  409: 'Conflict with the current state',
  422: 'Well-formed but not processable',
  502: 'An upstream service (a model, a tool server) failed',
  503: 'A needed part is not configured or not available',
};

const DESCRIPTION = [
  'The operations this service serves, generated from its controllers and DTOs (docs/openapi.md).',
  'Any operation may also answer 408 (the body arrived too slowly), 413 (the body is too large), 429 (rate limited) or',
  '503 (busy), with the same error body.',
].join(' ');

/**
 * Builds the document from the controllers' metadata (routes.ts) and their DTOs (dto-schemas.ts). Pure: the same
 * controllers give the same document. Routes declared `internal` (the console's pages) are left out.
 */
export function buildOpenApiDocument(controllers: readonly Function[]): OpenApiDocument {
  const routes = declaredRoutes(controllers).filter((r) => !r.options.internal);
  const paths: Record<string, Record<string, Operation>> = {};
  const ids = new Set<string>();
  for (const route of routes) {
    const op = operationOf(route);
    if (ids.has(op.operationId)) throw new Error(`two operations are named ${op.operationId} (${route.handler})`);
    ids.add(op.operationId);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  const bodies = routes.flatMap(dtosOf);
  return {
    openapi: '3.0.3',
    info: { title: 'Agent and retrieval service', version: '2.0', description: DESCRIPTION },
    paths,
    components: {
      schemas: { ...dtoSchemas(bodies), Error: ERROR_SCHEMA },
      securitySchemes: { ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' }, BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
  };
}

const ERROR_SCHEMA: Schema = {
  type: 'object',
  required: ['messages', 'request_id'],
  properties: {
    messages: { type: 'array', items: { type: 'string' } },
    request_id: { type: 'string' },
    field_errors: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

function operationOf(route: DeclaredRoute): Operation {
  const isPublic = route.policy !== undefined && POLICIES[route.policy as PolicyName]?.kind === 'public';
  const body = requestBody(route);
  return {
    operationId: REFERENCE_OPERATION_IDS[`${route.method} ${route.path}`] ?? ownName(route),
    tags: [route.controller.replace(/Controller$/, '')],
    parameters: [
      ...route.pathParams.map((name) => ({ name, in: 'path' as const, required: true, schema: { type: 'string' } })),
      ...route.queryParams.map((name) => ({ name, in: 'query' as const, required: false, schema: { type: 'string' } })),
    ],
    ...(body ? { requestBody: body } : {}),
    responses: Object.fromEntries(statusesOf(route, isPublic, body !== undefined).map((s) => [String(s), response(route, s)])),
    ...(isPublic ? { security: [] } : {}),
    ...(route.policy ? { 'x-policy': route.policy } : {}),
  };
}

/**
 * What the handler answers: its success status and declared ones, 400 when it reads a body or query parameters,
 * 401/403 when its policy needs a credential, 404 when its path names a resource or its policy hides corpora or
 * agents the caller may not read.
 */
export function statusesOf(route: DeclaredRoute, isPublic: boolean, hasBody: boolean): number[] {
  const kind = route.policy ? POLICIES[route.policy as PolicyName]?.kind : undefined;
  const statuses = new Set<number>([...(route.successStatus ? [route.successStatus] : []), ...(route.options.statuses ?? [])]);
  if (hasBody || route.queryParams.length) statuses.add(400);
  if (!isPublic) [401, 403].forEach((s) => statuses.add(s));
  if (route.pathParams.length || kind === 'corpus' || kind === 'agent') statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}

function response(route: DeclaredRoute, status: number): Schema {
  const description = REASONS[status] ?? `Status ${status}`;
  if (status >= 400) return { description, content: { 'application/json': { schema: { $ref: `${SCHEMA_PREFIX}Error` } } } };
  if (status === 204) return { description };
  const json = { 'application/json': { schema: {} } };
  return { description, content: route.options.stream && status !== 202 ? { ...json, 'text/event-stream': { schema: { type: 'string' } } } : json };
}

function requestBody(route: DeclaredRoute): Schema | undefined {
  const { body, form, freeBody } = route.options;
  const dtos = dtoList(body);
  const refs = dtos.map((d) => ({ $ref: `${SCHEMA_PREFIX}${d.name}` }));
  const json = refs.length === 1 ? refs[0] : refs.length ? { oneOf: refs } : freeBody ? {} : undefined;
  const content: Schema = {};
  if (json) content['application/json'] = { schema: json };
  if (form) content['multipart/form-data'] = { schema: { type: 'object', properties: Object.fromEntries(Object.entries(form).map(([name, field]) => [name, formField(field)])) } };
  return Object.keys(content).length ? { required: true, content } : undefined;
}

function formField(field: FormField): Schema {
  if (typeof field === 'function') return { $ref: `${SCHEMA_PREFIX}${field.name}` };
  if (field === 'file') return { type: 'string', format: 'binary' };
  if (field === 'files') return { type: 'array', items: { type: 'string', format: 'binary' } };
  return field === 'json' ? { type: 'object', additionalProperties: true } : { type: 'string' };
}

/** The DTOs a route's body and form fields are validated with. */
const dtosOf = (route: DeclaredRoute): DtoClass[] => [...dtoList(route.options.body), ...Object.values(route.options.form ?? {}).filter((f): f is DtoClass => typeof f === 'function')];

const dtoList = (body: DtoClass | readonly DtoClass[] | undefined): DtoClass[] => (body === undefined ? [] : Array.isArray(body) ? [...body] : [body as DtoClass]);

/** `CorporaController.filterValues` → `corporaFilterValues`. */
function ownName(route: DeclaredRoute): string {
  const [cls, method] = route.handler.split('.');
  const base = cls.replace(/Controller$/, '');
  return `${base[0].toLowerCase()}${base.slice(1)}${method[0].toUpperCase()}${method.slice(1)}`;
}
