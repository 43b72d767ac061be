/**
 * When a name or a value is a secret, and when a value is written down literally rather than
 * referenced. The values themselves never leave the analyzer that reads them.
 */

/** Segments that make a name a secret wherever they stand (`DB_PASSWORD`, `authToken`). */
const SECRET_SEGMENTS = new Set([
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'SECRET',
  'TOKEN',
  'APIKEY',
  'PRIVATEKEY',
  'CREDENTIAL',
  'CREDENTIALS',
]);
/** `KEY` alone is too common (`hash_key`, `CACHE_KEY`, `PUBLIC_KEY`); it counts after one of these. */
const KEY_QUALIFIERS = new Set([
  'API',
  'ACCESS',
  'ACCOUNT',
  'AUTH',
  'CLIENT',
  'DEPLOY',
  'ENCRYPT',
  'ENCRYPTION',
  'GPG',
  'HMAC',
  'JWT',
  'LICENSE',
  'MASTER',
  'PRIVATE',
  'SECRET',
  'SESSION',
  'SHARED',
  'SIGNING',
  'SSH',
  'SSL',
  'TLS',
  'WEBHOOK',
]);
/** A last segment saying the variable is about a secret (where, which, whether), not one. */
const NOT_SECRET_LAST = new Set([
  'ARN',
  'DIR',
  'ENABLED',
  'FILE',
  'HEADER',
  'HOST',
  'ID',
  'LENGTH',
  'NAME',
  'PATH',
  'PORT',
  'REF',
  'TTL',
  'TYPE',
  'URI',
  'URL',
]);

/** Upper-case segments of a name split at `_`, `-`, `.`, spaces and camelCase humps. */
function segments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
}

/**
 * A variable or key name that holds a secret. Whole segments count, so `PASSPORT_URL` and
 * `TOKENIZER_MODEL` are no secrets: `PASSWORD`, `PASSWD`, `PASSPHRASE`, `SECRET`, `TOKEN`,
 * `APIKEY`, `PRIVATEKEY`, `CREDENTIAL(S)` anywhere, run together with a prefix too
 * (`dbpassword`, `AUTHTOKEN`); `PASS` and `PWD` as the last segment of a longer name (`DB_PASS`;
 * `PASS` alone too, but `PWD` alone is the shell's working directory); `KEY` after a qualifier
 * (`API_KEY`, `SSH_KEY`, not `CACHE_KEY`). A last segment such as `_FILE`, `_NAME`, `_URL` or
 * `_ID` names where or which secret, not the secret (`POSTGRES_PASSWORD_FILE`, `AWS_ACCESS_KEY_ID`).
 */
export function isSecretName(name: string): boolean {
  const segs = segments(name);
  const last = segs[segs.length - 1];
  if (!last || NOT_SECRET_LAST.has(last)) return false;
  if (segs.some((s) => SECRET_SEGMENTS.has(s) || /(PASSWORD|PASSWD|SECRET|TOKEN)$/.test(s)))
    return true;
  if (last === 'PASS' || (last === 'PWD' && segs.length > 1)) return true;
  return segs.some((s, i) => s === 'KEY' && KEY_QUALIFIERS.has(segs[i - 1] ?? ''));
}

/** Values that are credentials whatever their name (Stripe, AWS, GitHub, Slack keys, PEM keys). */
export function looksLikeSecretValue(value: string): boolean {
  return (
    /^(sk|rk)_(live|test)_[A-Za-z0-9]{8,}/.test(value) ||
    /^(AKIA|ASIA)[0-9A-Z]{16}$/.test(value) ||
    /^gh[pousr]_[A-Za-z0-9]{20,}/.test(value) ||
    /^github_pat_[A-Za-z0-9_]{20,}/.test(value) ||
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value) ||
    /^xox[abpr]-[A-Za-z0-9-]{10,}/.test(value)
  );
}

/**
 * A value written down as it is: a number, or text that is not blank, not a boolean or null
 * word (`true`, `no`, `~`...), and no reference: it does not start with `$` or `%` (`$VAR`,
 * `$(var)`, `%VAR%`) and holds no `${...}`, `${{ }}`, `{{ }}` or `<< >>` expression.
 */
export function isLiteralValue(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (typeof value !== 'string') return false;
  const v = value.trim();
  if (v === '' || /^(true|false|yes|no|null|~)$/i.test(v)) return false;
  if (v.startsWith('$') || v.startsWith('%')) return false;
  return !v.includes('${') && !v.includes('{{') && !v.includes('<<');
}

/** Words that stand for a value still to be filled in, never a real credential. */
const PLACEHOLDER_WORDS =
  /^(change[-_ .]?me|replace[-_ .]?me|placeholder|dummy|fake|example|sample|todo|tbd|fixme|redacted|none|null|undefined|x{3,}|\*{3,}|\.{3,})$/i;
/** References a secret manager resolves at deploy or run time (the value lives elsewhere). */
const SECRET_MANAGER_REF =
  /^(arn:aws[\w-]*:(secretsmanager|ssm):|\{\{resolve:(secretsmanager|ssm-secure|ssm):|projects\/[^/]+\/secrets\/|(sm|gsm|gcpsm|vault|akv|awssm|awsssm|op|doppler|infisical|bws):\/\/|vault:|ref\+\w+:\/\/|@Microsoft\.KeyVault\(|secretref:|keyvaultref:)/i;

/**
 * Why a value written in place of a secret is a placeholder rather than a secret (null: it may
 * be one): `<your key>`, `[TOKEN]`, `GOOGLE_API_KEY_VAL` (an upper-case name ending `_VAL`/
 * `_VALUE`/`_PLACEHOLDER`, replaced at deploy time), `changeme`, `dummy`, `your-api-key`, `xxx`,
 * or a secret manager reference (`arn:aws:secretsmanager:...`, `projects/p/secrets/s`,
 * `vault:...`, `{{resolve:secretsmanager:...}}`, `@Microsoft.KeyVault(...)`).
 */
export function placeholderReason(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim();
  if (/^<[^<>]+>$/.test(v) || /^\[[^[\]]+\]$/.test(v)) return 'a <...> placeholder';
  if (/^[A-Z][A-Z0-9_]*_(VAL|VALUE|PLACEHOLDER)$/.test(v))
    return 'an upper-case placeholder replaced at deploy time';
  if (PLACEHOLDER_WORDS.test(v) || /^(your|insert|enter|put)[-_ ][\w -]*$/i.test(v))
    return 'a placeholder word';
  if (SECRET_MANAGER_REF.test(v)) return 'a secret manager reference';
  return null;
}
