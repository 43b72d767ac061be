/**
 * Secrets in settings files (issue 30): the project `.env` file and .NET `appsettings*.json`.
 * Per format a case that must pass (references, placeholders, no password) and one that must fail
 * (a literal password, in a variable or inside a connection string), located at its line.
 */
import test from 'ava';
import { assessFiles, control } from './helpers/assess-files';

const SECRETS = 'no-committed-secrets';

test('.env: references, placeholders and plain settings pass', async (t) => {
  const a = control(
    await assessFiles({
      '.env':
        '# compose settings\nPOSTGRES_HOST=db\nPOSTGRES_PASSWORD=${DB_PASSWORD}\nAPI_KEY=\nAPI_TOKEN="<your token>"\nSECRET_KEY=changeme # to be set\nPOSTGRES_PASSWORD_FILE=/run/secrets/db\n',
    }),
    SECRETS,
  );
  t.is(a.status, 'pass', a.rationale);
  t.deepEqual(a.findings, []);
  t.regex(a.applicability_rationale, /\.env \(API_TOKEN: a <\.\.\.> placeholder\)/);
});

test('.env: a literal password fails at its line, quoted or with an inline comment', async (t) => {
  const a = control(
    await assessFiles({
      '.env':
        'POSTGRES_HOST=db\nPOSTGRES_PASSWORD=changeit\nPOSTGRES_ASTRONOMY_PASSWORD=astronomy_password    # defined in init.sql\nexport STRIPE_KEY="sk_live_abcdefghijklmnop"\n',
    }),
    SECRETS,
  );
  t.is(a.status, 'fail');
  t.deepEqual(a.findings.map((f) => f.location?.start_line).sort(), [2, 3, 4]);
  t.true(a.findings.every((f) => f.location?.path === '.env'));
  // The value itself never appears in what is reported.
  t.false(JSON.stringify(a).includes('astronomy_password'));
});

test('appsettings.json: connection strings without a password and references pass', async (t) => {
  const a = control(
    await assessFiles({
      'src/Api/appsettings.json': JSON.stringify(
        {
          ConnectionStrings: {
            db: 'Server=db;Port=5432;Database=orders;Integrated Security=true',
            cache: 'redis:6379',
          },
          Jwt: { Secret: '${JWT_SECRET}' },
          Logging: { LogLevel: { Default: 'Information' } },
        },
        null,
        2,
      ),
    }),
    SECRETS,
  );
  t.is(a.status, 'pass', a.rationale);
});

test('appsettings.Development.json: a password in a connection string or a literal ApiKey fails', async (t) => {
  const text =
    '{\n  // local development\n  "ConnectionStrings": {\n    "baristadb": "Server=localhost;Port=5432;Database=postgres;User Id=postgres;Password=P@ssw0rd;"\n  },\n  "Payments": {\n    "ApiKey": "k3y-live-0123456789"\n  }\n}\n';
  const a = control(
    await assessFiles({ 'src/BaristaService/appsettings.Development.json': text }),
    SECRETS,
  );
  t.is(a.status, 'fail');
  t.deepEqual(a.findings.map((f) => [f.location?.path, f.location?.start_line]).sort(), [
    ['src/BaristaService/appsettings.Development.json', 4],
    ['src/BaristaService/appsettings.Development.json', 7],
  ]);
  t.false(JSON.stringify(a).includes('P@ssw0rd'));
  // Not JSON at all: nothing read, nothing thrown.
  const bad = control(await assessFiles({ 'appsettings.json': '{ nope' }), SECRETS);
  t.not(bad.status, 'fail');
});
