/**
 * Managed Google Cloud datastores a unit's code opens with the Google Cloud client libraries
 * (docs/decisions.md, "Google Cloud client libraries connect to Firestore and to named Cloud
 * Storage buckets"). They take no address: the client reaches the project's store with ambient
 * credentials, so no URL ever names it.
 * - Firestore: `firestore.Client()` / `firestore.AsyncClient()` (Python google-cloud-firestore),
 *   `firestore.client()` (firebase_admin), `new Firestore(` (Node @google-cloud/firestore),
 *   `getFirestore(` (firebase-admin), `firestore.NewClient(` (Go), `FirestoreOptions` (Java): the
 *   project's one database, `datastore:firestore`.
 * - Cloud Storage: `.bucket(<name>)` / `.get_bucket(<name>)` / `.Bucket(<name>)` in a file that
 *   imports the storage library, the name a string literal, an environment read
 *   (`os.environ["X"]`, `os.getenv("X")`, `process.env.X`, `os.Getenv("X")`) or a variable set
 *   from one in the same file; an environment name takes the value a Cloud Run deploy of the
 *   unit gives it. The bucket is `datastore:<name>` with the name's variable parts dropped
 *   (`${PROJECT}-sessions` -> `sessions`); a name left unknown draws nothing.
 * Test files and units' test folders are skipped; comments are not read specially (a call in a
 * comment is rare enough).
 */
import { entityKey, type Evidence } from '../evidence';
import { evidence } from '../shared/evidence';
import { LineIndex } from '../shared/text';
import { cloudRunEnvironments } from './cloud-run-deploys';
import { literalPart } from './cloud-run-scripts';
import { isTestPath, languageOf } from './common';
import type { CodeModel } from './model';

const FIRESTORE: Partial<Record<string, RegExp>> = {
  python: /\bfirestore\.(?:Async)?Client\s*\(|\bfirestore\.client\s*\(/,
  javascript: /\bnew\s+Firestore\s*\(|\bgetFirestore\s*\(|\badmin\.firestore\s*\(/,
  typescript: /\bnew\s+Firestore\s*\(|\bgetFirestore\s*\(|\badmin\.firestore\s*\(/,
  go: /\bfirestore\.NewClient\s*\(/,
  java: /\bFirestoreOptions\b|\bFirestoreClient\.create\s*\(/,
  kotlin: /\bFirestoreOptions\b|\bFirestoreClient\.create\s*\(/,
};
const FIRESTORE_IMPORT =
  /google[.-]cloud[.:/-]firestore|google\.cloud\s+import\s+firestore|firebase[_-]admin|cloud\.google\.com\/go\/firestore/;

const STORAGE_IMPORT =
  /google\.cloud\s+import\s+storage|google\.cloud\.storage|@google-cloud\/storage|cloud\.google\.com\/go\/storage/;
const BUCKET_CALL = /\.(?:bucket|get_bucket|lookup_bucket|Bucket)\s*\(\s*([^,()]+?)\s*[,)]/g;
const STRING = /^(["'`])([^"'`]*)\1$/;
const ENV_READ =
  /^(?:os\.environ\.get\(\s*|os\.environ\[\s*|os\.getenv\(\s*|os\.Getenv\(\s*)["']([A-Za-z_]\w*)["']|^process\.env\.([A-Za-z_]\w*)|^process\.env\[\s*["']([A-Za-z_]\w*)["']/;

/** The environment variable an expression reads, if it is one such read. */
function envRead(expr: string): string | null {
  const m = ENV_READ.exec(expr.trim());
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

/** The variable a file assigns from an environment read (`NAME = os.environ.get("X")`). */
function assignedEnv(text: string, ident: string): string | null {
  const escaped = ident.replace(/[.$]/g, '\\$&');
  const re = new RegExp(
    String.raw`(?:^|[\s;])(?:const\s+|let\s+|var\s+)?${escaped}\s*:?=\s*([^\n;]+)`,
    'gm',
  );
  for (const m of text.matchAll(re)) {
    const env = envRead(m[1] ?? '');
    if (env !== null) return env;
  }
  return null;
}

/** The bucket name an argument gives, with the unit's deployed environment; null if unknown. */
function bucketName(
  arg: string,
  text: string,
  env: Map<string, string> | undefined,
): string | null {
  const lit = STRING.exec(arg);
  if (lit) return literalPart(lit[2]!);
  const variable = envRead(arg) ?? (/^[A-Za-z_][\w.]*$/.test(arg) ? assignedEnv(text, arg) : null);
  if (variable === null) return null;
  const value = env?.get(variable);
  return value === undefined ? null : literalPart(value);
}

/**
 * `connects_to` evidence from each code unit to Firestore and to the Cloud Storage buckets its
 * code opens through the Google Cloud client libraries.
 */
export function googleCloudStoreEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  let envs: Map<string, Map<string, string>> | null = null;
  for (const unit of model.units) {
    const seen = new Set<string>();
    for (const f of model.filesByUnit.get(unit.key) ?? []) {
      const lang = languageOf(f.path);
      if (lang === null || isTestPath(f.path)) continue;
      const push = (at: number, object: string, summary: string, attributes: object) => {
        if (seen.has(object)) return;
        seen.add(object);
        const line = new LineIndex(f.text).lineAt(at);
        out.push(
          evidence(
            f,
            { start: line, end: line },
            {
              source: 'code',
              provider: `${lang}-source`,
              kind: 'sdk-connection',
              subject: unit.key,
              relationship: 'connects_to',
              object,
              summary,
              attributes: { ...attributes, cloud: 'google' },
            },
          ),
        );
      };
      const fs = FIRESTORE[lang];
      const fm = fs && FIRESTORE_IMPORT.test(f.text) ? fs.exec(f.text) : null;
      if (fm)
        push(
          fm.index,
          entityKey('datastore', 'firestore'),
          `${f.path} opens the project's Firestore database`,
          {
            engine: 'firestore',
          },
        );
      if (!STORAGE_IMPORT.test(f.text)) continue;
      for (const m of f.text.matchAll(BUCKET_CALL)) {
        envs ??= cloudRunEnvironments(model);
        const name = bucketName(m[1] ?? '', f.text, envs.get(unit.dir));
        if (name === null) continue;
        push(
          m.index ?? 0,
          entityKey('datastore', name),
          `${f.path} opens Cloud Storage bucket ${name}`,
          {
            engine: 'gcs',
            bucket: name,
          },
        );
      }
    }
  }
  return out;
}
