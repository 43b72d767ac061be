/** bench:findings: the scoring, and the hand labels are well formed (issue 30, item 6). */
import test from 'ava';
import { CONTROLS } from '../analysis/controls';
import { listSystems, precision, recall, scoreControl } from '../bench/findings';

test('scoring: a finding on a violation is a hit, on a look-alike or unlabelled file a false positive', (t) => {
  const tally = scoreControl(
    {
      violations: [
        { path: 'a/Dockerfile', why: 'root' },
        { path: 'b/Dockerfile', why: 'root' },
      ],
      look_alikes: [{ path: 'c/Dockerfile', why: 'overridden' }],
    },
    ['a/Dockerfile', 'c/Dockerfile', 'd/Dockerfile'],
  );
  t.deepEqual(tally, {
    tp: ['a/Dockerfile'],
    fp: ['c/Dockerfile', 'd/Dockerfile'],
    fn: ['b/Dockerfile'],
  });
  t.is(precision(tally), 1 / 3);
  t.is(recall(tally), 1 / 2);
  t.is(precision({ tp: [], fp: [], fn: [] }), 1, 'nothing claimed, nothing wrong');
});

test('labels: at least 8 systems, known controls, pinned commits, no file both ways', (t) => {
  const systems = listSystems();
  t.true(systems.length >= 8);
  const keys = new Set(CONTROLS.map((c) => c.key));
  for (const s of systems) {
    t.regex(s.commit, /^[0-9a-f]{40}$/, s.system);
    t.regex(s.repository, /^[\w.-]+\/[\w.-]+$/, s.system);
    for (const [control, labels] of Object.entries(s.controls)) {
      t.true(keys.has(control), `${s.system}: ${control}`);
      const bad = labels.violations.filter((v) =>
        labels.look_alikes.some((l) => l.path === v.path),
      );
      t.deepEqual(bad, [], `${s.system} ${control}`);
      for (const l of [...labels.violations, ...labels.look_alikes]) {
        t.true(l.why.length > 0, `${s.system} ${control} ${l.path} says why`);
        t.false(l.path.startsWith('/') || l.path.includes('..'), l.path);
      }
    }
  }
});
