/**
 * A deployment's database engine choice (docs/decisions.md, "An address variable of an engine
 * the deployment's choice excludes"): a container whose environment sets an engine-choosing
 * variable (`DB_ENGINE: sqlite`, `DATABASE_TYPE: mysql`, `DB_DRIVER=postgres`) opens that engine
 * only; the address variables of another engine written beside it (`POSTGRES_SERVER: postgres`
 * while `DB_ENGINE: sqlite`, the settings of the documented alternative left in place) are inert.
 * A reference such a variable makes to a host no container of the same compose file runs is then
 * no call (no edge, no entity). A host the file does run stays a reference: the file wires it.
 */
import { asString } from '../shared/values';
import { interpolate, type EnvVar } from './compose-values';

/** Variables naming the engine a program opens (`DB_ENGINE`, `DATABASE_TYPE`, `DB_DRIVER`). */
const CHOICE_VAR = /^(?:DB|DATABASE)_?(?:ENGINE|TYPE|DRIVER|PROVIDER|DIALECT|BACKEND|VENDOR)$/i;

/** Engine families of a name's or value's words: a word of one names that family. */
const FAMILIES: [RegExp, string][] = [
  [/^sqlite3?$/i, 'sqlite'],
  [/^(?:postgres(?:ql|db)?|pg|psql|pgsql)$/i, 'postgres'],
  [/^(?:mysql2?|mariadb|maria)$/i, 'mysql'],
  [/^(?:mssql|sqlserver)$/i, 'mssql'],
  [/^(?:mongo|mongodb)$/i, 'mongodb'],
  [/^(?:oracle|oracledb)$/i, 'oracle'],
];

/** The engine families a name or value names by one of its words (`DB_POSTGRESDB_HOST`). */
function familiesOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.split(/[^A-Za-z0-9]+/))
    for (const [re, family] of FAMILIES) if (re.test(word)) out.add(family);
  return out;
}

/**
 * The engine family a container's environment chooses (`DB_ENGINE: sqlite` -> `sqlite`), its
 * value interpolated from the project's variables; null when no variable chooses one, the value
 * stays unknown (`${DB_ENGINE}`), or several are chosen.
 */
export function chosenEngine(env: EnvVar[], vars: Map<string, string>): string | null {
  const chosen = new Set<string>();
  for (const e of env) {
    if (!CHOICE_VAR.test(e.name)) continue;
    const raw = asString(e.value);
    if (raw === null) continue;
    const value = interpolate(raw, vars);
    if (value.includes('$')) return null;
    for (const f of familiesOf(value)) chosen.add(f);
  }
  return chosen.size === 1 ? [...chosen][0]! : null;
}

/**
 * Whether a reference `variable` makes to `host` is inert: the variable names an engine
 * (`POSTGRES_SERVER`) other than the one the container chooses (`sqlite`), and no service of
 * the container's own compose file is `host` (`ownServices`).
 */
export function excludedByEngineChoice(
  chosen: string | null,
  variable: string,
  host: unknown,
  ownServices: ReadonlySet<string>,
): boolean {
  if (chosen === null || typeof host !== 'string') return false;
  const named = familiesOf(variable);
  if (named.size === 0 || named.has(chosen)) return false;
  return !ownServices.has(host.toLowerCase());
}
