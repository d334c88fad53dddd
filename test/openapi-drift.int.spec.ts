import { API_CONTROLLERS } from '../apps/api/src/api.module';
import { buildOpenApiDocument } from '../apps/api/src/openapi/document';
import { drift, loadYaml, operationsOf } from './support/openapi-drift';
import { REFERENCE_DEVIATIONS as ALLOWED } from './support/reference-deviations';
import { describeWithReference, REFERENCE_OAS_PATH } from './support/reference-openapi';

/**
 * Issue 44: the service's own OpenAPI document against the reference's, on every operation both serve (same method
 * and path template): operationIds, path parameters, the reference's required query parameters, and statuses
 * (ours among the reference's plus the deviations below). The document is built from the code, so a handler that
 * changes what it takes or answers changes it, and this test names the difference.
 */

describeWithReference('the OpenAPI document against the reference', () => {
  const ours = buildOpenApiDocument(API_CONTROLLERS);
  const reference = loadYaml(REFERENCE_OAS_PATH as string);

  it('has no drift on the operations both serve, beyond the documented deviations', () => {
    expect(drift(ours as never, reference, ALLOWED)).toEqual([]);
  });

  it('names the reference operationId on every operation both serve (no shared operation left out)', () => {
    const refs = operationsOf(reference);
    const mine = operationsOf(ours as never);
    const shared = [...refs.keys()].filter((k) => mine.has(k));
    expect(shared.length).toBeGreaterThan(170);
    expect(shared.filter((k) => mine.get(k)?.operationId !== refs.get(k)?.operationId)).toEqual([]);
  });

  it('every allowed deviation is one the service still makes (the list does not outlive the code)', () => {
    const mine = operationsOf(ours as never);
    const byId = new Map([...operationsOf(reference).entries()].filter(([k]) => mine.has(k)).map(([k, r]) => [r.operationId, { ref: r, ours: mine.get(k)! }]));
    const stale = ALLOWED.filter((a) => a.operation !== '*').flatMap((a) => {
      const op = byId.get(a.operation);
      if (!op) return [`${a.operation}: not an operation both serve`];
      return (a.statuses ?? []).filter((s) => !op.ours.statuses.includes(s) || op.ref.statuses.includes(s)).map((s) => `${a.operation} ${s}`);
    });
    expect(stale).toEqual([]);
  });

  it('fails, naming the operation and the parameter, when a parameter or status drifts', () => {
    const drifted = JSON.parse(JSON.stringify(ours)) as typeof ours;
    const getCorpus = drifted.paths['/v2/corpora/{corpus_key}'].get;
    (getCorpus.parameters as { name: string }[])[0].name = 'corpus_id';
    const listDocs = drifted.paths['/v2/corpora/{corpus_key}/documents'].get;
    (listDocs.responses as Record<string, unknown>)['418'] = { description: 'teapot' };
    const listCorpora = drifted.paths['/v2/corpora'].get;
    (listCorpora as { operationId: string }).operationId = 'corporaList';
    const errors = drift(drifted as never, reference, ALLOWED);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^getCorpus \(GET \/v2\/corpora\/\{corpus_key\}\): path parameters corpus_id vs the reference's corpus_key/),
        expect.stringMatching(/^listCorpusDocuments .*answers 418, which the reference does not list/),
        'listCorpora (GET /v2/corpora): operationId is corporaList',
      ]),
    );
    expect(errors).toHaveLength(3);
  });

  it('fails when the service stops taking a query parameter the reference requires', () => {
    const required = [...operationsOf(reference).values()].flatMap((op) => op.query.filter((q) => q.required).map((q) => ({ op, name: q.name })));
    const mine = operationsOf(ours as never);
    const target = required.find(({ op }) => mine.has(op.key));
    if (!target) throw new Error('the reference has no required query parameter on a shared operation: this check has nothing to show');
    const drifted = JSON.parse(JSON.stringify(ours)) as typeof ours;
    const [method, path] = target.op.key.split(' ');
    const op = drifted.paths[path][method.toLowerCase()];
    (op as { parameters: { name: string }[] }).parameters = op.parameters.filter((p) => p.name !== target.name);
    expect(drift(drifted as never, reference, ALLOWED)).toEqual([`${target.op.operationId} (${target.op.key}): does not take the required query parameter ${target.name}`]);
  });
});
