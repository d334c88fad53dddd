import Ajv from 'ajv';
import { linearRegExp } from '@lib/platform';

const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } });

/** What a client submits for a registered client tool matches its `output_schema`, or the reasons it does not. */
export function clientOutputProblems(schema: Record<string, unknown> | undefined, output: unknown): string[] {
  if (!schema) return [];
  const validate = ajv.compile(schema);
  return validate(output) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(the output)'} ${e.message ?? 'is invalid'}`);
}
