import { invalid, type DomainError } from '../kernel/errors';
import type { FieldRef } from './filter';

/** A `part.` field where only document metadata exists (document lists, read stores). */
export function levelUnsupported(field: FieldRef): DomainError {
  const message = `Only doc. fields can be used here: ${field.level}.${field.name} is not available`;
  return invalid('filter.level_unsupported', message, { metadata_filter: message });
}
