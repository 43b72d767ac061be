/**
 * Composite actions (issue 30): `.github/actions/<name>/action.yml` steps run in the jobs that use
 * them, so their third-party actions and the images their inputs name are judged like a
 * workflow's; a composite action has no permissions or triggers of its own to judge.
 */
import test from 'ava';
import { classifyPath } from '../domain/audits/classify';
import { assessFiles, control } from './helpers/assess-files';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const composite = (steps: string) =>
  `name: setup\ndescription: set up\nruns:\n  using: composite\n  steps:\n${steps}`;

test('composite action files are CI files', (t) => {
  t.is(classifyPath('.github/actions/setup-docker/action.yml'), 'cicd');
  t.is(classifyPath('.github/actions/a/b/action.yaml'), 'cicd');
  t.not(classifyPath('docs/action.yml'), 'cicd');
});

test('a composite action with pinned actions and tagged images passes', async (t) => {
  const list = await assessFiles({
    '.github/actions/setup-docker/action.yml': composite(
      `    - uses: docker/setup-qemu-action@${SHA} # v3\n      with:\n        image: tonistiigi/binfmt:qemu-v9.2.2\n    - uses: actions/checkout@v4\n    - uses: ./.github/actions/other\n    - run: echo hi\n      shell: bash\n`,
    ),
  });
  const pinned = control(list, 'ci-actions-pinned');
  t.is(pinned.status, 'pass', pinned.rationale);
  const images = control(list, 'images-pinned');
  t.is(images.status, 'pass', images.rationale);
  // No workflow, so nothing for the permission and trigger controls to judge.
  t.is(control(list, 'ci-permissions-declared').status, 'not_applicable');
  t.is(control(list, 'ci-no-risky-triggers').status, 'not_applicable');
});

test('a composite action with a tag-pinned third-party action and a latest image fails', async (t) => {
  const list = await assessFiles({
    '.github/actions/setup-docker/action.yml': composite(
      `    - name: Set up QEMU\n      uses: docker/setup-qemu-action@v3\n      with:\n        image: tonistiigi/binfmt:latest\n    - uses: jdx/mise-action@main\n`,
    ),
  });
  const pinned = control(list, 'ci-actions-pinned');
  t.is(pinned.status, 'fail');
  t.deepEqual(
    [...new Set(pinned.findings.map((f) => f.location?.path))],
    ['.github/actions/setup-docker/action.yml'],
  );
  t.is(pinned.findings.length, 2);
  const images = control(list, 'images-pinned');
  t.is(images.status, 'fail');
  t.regex(images.findings[0]!.title, /tonistiigi\/binfmt:latest is referenced as latest/);
  // An expression is not an image anyone runs as written.
  const expr = await assessFiles({
    '.github/actions/x/action.yml': composite(
      `    - uses: docker/setup-qemu-action@${SHA}\n      with:\n        image: \${{ inputs.image }}\n`,
    ),
  });
  t.is(control(expr, 'images-pinned').status, 'not_applicable');
});

test('a non-composite action.yml (a JavaScript action) yields nothing to judge', async (t) => {
  const list = await assessFiles({
    '.github/actions/js/action.yml': 'name: js\nruns:\n  using: node20\n  main: index.js\n',
  });
  t.is(control(list, 'ci-actions-pinned').status, 'not_applicable');
});
