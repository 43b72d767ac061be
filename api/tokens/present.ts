/** Row-to-response mappers used by more than one resource module. */
import type { TokenRow } from '../../db/tokens';
import { iso, isoOrNull } from '../shared';
import type { ApiTokenResponse } from './schemas';

export function presentToken(row: TokenRow): ApiTokenResponse {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
    last_used_at: isoOrNull(row.last_used_at),
    revoked_at: isoOrNull(row.revoked_at),
    created_at: iso(row.created_at),
    // Beyond the spec's fields: the lineage that revocation follows.
    created_by_token_id: row.created_by_token_id,
  };
}
