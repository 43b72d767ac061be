/**
 * Addresses in code: `getenv('X_URL') ?: 'http://x:8080'` in a PHP service (a composer.json
 * unit), and the same default forms in Python (`os.getenv("X") or "..."`) and Ruby
 * (`ENV["X"] || "..."`): the default is the address in effect unless configuration sets X.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const COMPOSE = `services:
  kernel:
    build: ./kernel
  reports:
    build: ./reports
  mailer:
    build: ./mailer
    environment:
      SMTP_RELAY_URL: http://relay:2525
  catalog:
    image: shop/catalog:1
  billing:
    image: shop/billing:1
  pricing:
    image: shop/pricing:1
  relay:
    image: shop/relay:1
  legacy-relay:
    image: shop/legacy-relay:1
`;

test('defaults written after the environment read are the addresses in effect', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': COMPOSE,
      'kernel/composer.json': JSON.stringify({
        name: 'shop/kernel',
        require: { php: '^8.2', 'guzzlehttp/guzzle': '^7.0' },
      }),
      'kernel/src/Kernel.php': `<?php
final class Kernel
{
    public function boot(): void
    {
        $catalog = getenv('CATALOG_URL') ?: 'http://catalog:8080';
        $billing = $_ENV['BILLING_URL'] ?? 'http://billing:8080';
        $this->client = new \\GuzzleHttp\\Client(['base_uri' => $catalog]);
    }
}
`,
      'reports/requirements.txt': 'requests==2.31\n',
      'reports/app.py': 'import os\nPRICING = os.getenv("PRICING_URL") or "http://pricing:8080"\n',
      'mailer/Gemfile': "source 'https://rubygems.org'\ngem 'mail'\n",
      'mailer/requirements.txt': 'requests==2.31\n',
      'mailer/app.py':
        'import os\nRELAY = os.environ.get("SMTP_RELAY_URL") or "http://legacy-relay:2525"\n',
    }),
  );
  const e = edges(graph);
  const msg = e.join('\n');
  t.true(e.includes('service:kernel -> service:catalog'), msg);
  t.true(e.includes('service:kernel -> service:billing'), msg);
  t.true(e.includes('service:reports -> service:pricing'), msg);
  // Configuration sets the variable: its value wins, the default is not in effect.
  t.true(e.includes('service:mailer -> service:relay'), msg);
  t.false(e.includes('service:mailer -> service:legacy-relay'), msg);
});
