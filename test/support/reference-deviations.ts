import type { Allowed } from './openapi-drift';

/**
 * The one list of statuses (and required query parameters) the service answers or takes where the reference lists
 * otherwise, on purpose, a reason each; docs/conformance.md has the same rows. The conformance walker accepts these
 * statuses (with the reference's Error body) and the OpenAPI drift test accepts them in the service's document; the
 * drift test also fails when an entry is one the service no longer makes.
 */
export const REFERENCE_DEVIATIONS: readonly Allowed[] = [
  { operation: '*', statuses: [401], reason: 'the reference lists no 401 anywhere, yet a request without valid credentials gets one' },
  { operation: '*', statuses: [400], reason: 'a malformed body or parameter is refused the same way everywhere, where a listing omits 400 too' },
  { operation: '*', statuses: [202], reason: 'a write whose projections lagged past the bounded wait is durable but not yet visible (x-read-your-writes: pending; docs/architecture.md)' },
  { operation: 'getOAuthToken', statuses: [400, 401], reason: 'RFC 6749 §5.2 (invalid_request, invalid_client); the reference lists only 200' },
  { operation: 'evaluateFactualConsistency', statuses: [503], reason: 'no scorer configured: none of the listed statuses says that' },
  ...['getApiKey', 'updateApiKey', 'deleteApiKey', 'getAppClient', 'updateAppClient', 'deleteAppClient', 'listAgentScheduleExecutions'].map((operation) => ({
    operation,
    statuses: [404],
    reason: 'an id that names nothing (or, for keys, another user’s personal key) is 404 (spec: Errors 3, Authentication 4)',
  })),
  ...(
    [
      ['updateUser', 'the account owner keeps the owner role and cannot be disabled'],
      ['deleteUser', 'the account owner cannot be deleted'],
      ['updateApiKey', 'the bootstrap key cannot be disabled (rotate ADMIN_API_KEY instead)'],
      ['deleteApiKey', 'the bootstrap key cannot be deleted (rotate ADMIN_API_KEY instead)'],
      ['createInstruction', 'an instruction id already taken (unlike taken agent or corpus keys, which are 400: left as found)'],
      ['deleteInstruction', 'an instruction that agents still use'],
      ['createAgentSession', "the agent's run_condition is false for the session"],
      ['createAliasRoutedSession', "the routed agent's run_condition is false for the session"],
      ['createAliasRoutedInput', 'a turn is already running (as createAgentSessionEvent lists it)'],
      ['replacePipeline', 'the pipeline changed while the replacement was prepared'],
      ['updatePipeline', 'the pipeline changed while the update was prepared'],
    ] as const
  ).map(([operation, reason]) => ({ operation, statuses: [409], reason: `a conflict with the current state: ${reason}` })),
  { operation: 'deleteTool', statuses: [409], reason: 'a tool an agent uses is not deleted (409 naming the agents)' },
  { operation: 'deleteToolServer', statuses: [409], reason: 'a tool server whose tools an agent uses is not deleted (409 naming the agents)' },
  { operation: 'syncToolServer', statuses: [502], reason: 'the MCP server cannot be reached, refuses the token or is refused by the outbound policy; the listed 403 and 404 would blame the caller' },
  ...['listMetrics', 'getMetric'].map((operation) => ({ operation, statuses: [403], reason: 'a credential without a metrics-reading role is refused; the listings omit 403' })),
  ...['deleteAgentEvent', 'hideAgentEvent', 'unhideAgentEvent', 'listAgentScheduleExecutions'].map((operation) => ({
    operation,
    statuses: [403],
    reason: 'a caller with another role on the agent than the one the route needs is refused (403), as on every agent route',
  })),
];

/** Whether the service answers `status` on `operationId` on purpose though the reference does not list it. */
export const isDeviation = (operationId: string, status: number): boolean =>
  REFERENCE_DEVIATIONS.some((d) => (d.operation === '*' || d.operation === operationId) && (d.statuses ?? []).includes(status));
