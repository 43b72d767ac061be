/**
 * No system of the accuracy corpus may be special-cased by name (issue 23): the analyzers
 * (analysis/**, domain/audits/**) must not name a corpus repository, its owner or one of its
 * distinctive service names. First-sight accuracy is only a measure of general capabilities if
 * nothing in the analyzers knows which system it is looking at.
 *
 * Comment lines are not searched (a comment may cite an image name as an example of a form); a
 * name in code or in a string literal is a hit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { EXPECTED_DIR, listCorpora, readExpected } from '../bench/accuracy';

const ROOT = path.join(__dirname, '..');
const ANALYZERS = ['analysis', 'domain/audits'];

/**
 * Owners whose names are platforms, which generic idioms legitimately know (image registries such
 * as mcr.microsoft.com, `dotnet` tooling, Azure resource types, OpenTelemetry images, `docker` in
 * Dockerfile, docker-compose and docker.io, Grafana's images and data source files): not searched. Every other owner and every repository name is.
 */
const PLATFORM_OWNERS = new Set([
  'dotnet',
  'microsoft',
  'azure',
  'open-telemetry',
  'aws-samples',
  'docker',
  'grafana',
]);
/**
 * Repository names that are ordinary words (`getsentry/self-hosted`, `mattermost/docker`): its
 * owner and DISTINCTIVE stand for it.
 */
const GENERIC_PROJECTS = new Set(['self-hosted', 'docker', 'docker-compose']);

/**
 * Service names that occur in one corpus system and in no generic idiom (generic words such as
 * orders, cart, gateway, worker, kafka or clickhouse are deliberately absent).
 */
const DISTINCTIVE = [
  // Online Boutique, Sock Shop, retail store, OpenTelemetry demo
  'productcatalogservice',
  'recommendationservice',
  'shoppingassistant',
  'weaveworksdemos',
  'queue-master',
  'astronomy-db',
  // Aspire samples, PetClinic, coffeeshops
  'aspireshop',
  'basketcache',
  'catalogdbmanager',
  'petclinic',
  'coffeeshop',
  'barista',
  // PiggyMetrics, traffic control, Red Dog
  'turbine-stream',
  'auth-mongodb',
  'trafficcontrol',
  'finecollection',
  'vehicleregistration',
  'entrycam',
  'exitcam',
  'reddog',
  'makeline',
  'make-line',
  'receipt-generation',
  'virtual-customers',
  // modular monolith, podcasts, super heroes, langfuse
  'mymeetings',
  'listentogether',
  'podcast',
  'rest-fights',
  'rest-villains',
  'rest-heroes',
  'super-heroes',
  'superheroes',
  'grpc-locations',
  'event-statistics',
  'fights-kafka',
  'langfuse',
  // Sentry self-hosted
  'snuba',
  'symbolicator',
  // DeathStarBench hotel reservation
  'hotel-reserv',
  'hotelreservation',
];

/** The searched terms: every corpus repository name and owner (but platforms), and DISTINCTIVE. */
function corpusTerms(): string[] {
  const terms = new Set(DISTINCTIVE);
  for (const name of listCorpora()) {
    const repo = readExpected(path.join(EXPECTED_DIR, name)).repository;
    if (!repo) continue;
    const [owner, project] = repo.toLowerCase().split('/') as [string, string];
    if (!PLATFORM_OWNERS.has(owner)) terms.add(owner);
    if (!GENERIC_PROJECTS.has(project)) terms.add(project);
  }
  return [...terms];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|js|json|ya?ml)$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** Every `file:line: term` where a term occurs on a line that is not a comment line. */
function findNames(roots: string[], terms: string[]): string[] {
  const hits: string[] = [];
  const lowered = terms.map((t) => t.toLowerCase());
  for (const root of roots)
    for (const file of sourceFiles(root)) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        const code = line.trim();
        if (/^(\/\/|\/\*|\*|#)/.test(code)) return;
        const lower = code.toLowerCase();
        for (const term of lowered)
          if (lower.includes(term)) hits.push(`${path.relative(ROOT, file)}:${i + 1}: ${term}`);
      });
    }
  return hits;
}

test('the analyzers name no corpus system: no repository, owner or distinctive service name', (t) => {
  const terms = corpusTerms();
  // Every system contributes at least its repository name.
  t.true(terms.length >= DISTINCTIVE.length + listCorpora().length / 2, terms.join(', '));
  const hits = findNames(
    ANALYZERS.map((d) => path.join(ROOT, d)),
    terms,
  );
  t.deepEqual(hits, [], `corpus names in the analyzers:\n${hits.join('\n')}`);
});

test('the search finds a name in code and in a string, and skips comment lines', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corpus-names-'));
  try {
    fs.mkdirSync(path.join(dir, 'cloud'));
    fs.writeFileSync(
      path.join(dir, 'cloud', 'special.ts'),
      [
        '// piggymetrics is cited here as an example',
        ' * so is Reddog in a block comment',
        "const hosts = ['PiggyMetrics-config'];",
        'if (name === `rest-fights`) return true;',
      ].join('\n'),
    );
    const hits = findNames([dir], ['piggymetrics', 'reddog', 'rest-fights']).map((h) =>
      h.replace(/^.*special\.ts/, 'special.ts'),
    );
    t.deepEqual(hits, ['special.ts:3: piggymetrics', 'special.ts:4: rest-fights']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
