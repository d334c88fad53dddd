import { authHeaders } from './api';

/**
 * May the signed-in credential make this write? Asked of the API itself, without writing: the service's guard
 * decides from the headers before it reads a body (docs/security.md, "Authentication before bodies"), so a POST
 * whose body can never be valid (`[]`: every create takes a JSON object) is answered 403 when the credential may
 * not make it and 400 when it may, and changes nothing either way. The console keeps no table of roles: a role
 * that changes, a data key bounded by its creator, an app client's grants all come out as the guard decides them.
 * Anything but a 403 (the service unreachable, a 5xx) counts as allowed: the form is shown and its submit says why.
 */
export async function mayWrite(method: 'POST' | 'PUT' | 'PATCH', path: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(path, { method, signal, headers: { ...authHeaders(), 'content-type': 'application/json' }, body: '[]' });
    await res.body?.cancel();
    return res.status !== 403;
  } catch {
    return true;
  }
}
