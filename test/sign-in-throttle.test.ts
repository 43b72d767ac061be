/**
 * The sign-in throttle's arithmetic on a fake clock: only failures count, the wait starts at
 * the limit and doubles with each further failure up to the window, a success clears its
 * login-and-address, failures are forgotten after the window, and no address's failures touch
 * the same login elsewhere (the lockout the probe found).
 */
import test from 'ava';
import { SignInThrottle } from '../api/sessions/throttle';

function throttle(limit = 3) {
  let now = 1_000_000;
  const th = new SignInThrottle(limit, 900, () => now);
  return { th, advance: (s: number) => (now += s * 1000) };
}

test('below the limit no wait; at it 30 s, then doubling up to the window', (t) => {
  const { th, advance } = throttle();
  for (let i = 0; i < 2; i++) th.failed('alice', 'A');
  t.is(th.waitSeconds('alice', 'A'), 0, 'two failures: no wait');
  th.failed('alice', 'A');
  t.is(th.waitSeconds('alice', 'A'), 30);
  advance(30);
  t.is(th.waitSeconds('alice', 'A'), 0, 'the wait is over');
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) {
    th.failed('alice', 'A');
    waits.push(th.waitSeconds('alice', 'A'));
    advance(waits.at(-1)!);
  }
  t.deepEqual(waits, [60, 120, 240, 480, 900, 900, 900]);
});

test('failures from A never slow the same login from B', (t) => {
  const { th } = throttle();
  for (let i = 0; i < 10; i++) th.failed('alice', 'A');
  t.true(th.waitSeconds('alice', 'A') > 0);
  t.is(th.waitSeconds('alice', 'B'), 0);
  t.is(th.waitSeconds('ALICE', 'B'), 0);
});

test('an address is limited across logins; a success clears only its login-and-address', (t) => {
  const { th } = throttle();
  th.failed('a', 'X');
  th.failed('b', 'X');
  t.is(th.waitSeconds('c', 'X'), 0);
  th.failed('c', 'X');
  t.is(th.waitSeconds('d', 'X'), 30, 'three failures from X, any logins');
  const { th: other } = throttle();
  other.failed('alice', 'B');
  other.failed('alice', 'B');
  other.succeeded('alice', 'B');
  other.failed('alice', 'C');
  other.failed('alice', 'C');
  t.is(other.waitSeconds('alice', 'C'), 0);
  t.is(other.waitSeconds('alice', 'C'), 0, 'two failures at C');
  other.failed('alice', 'B');
  t.is(other.waitSeconds('alice', 'B'), 30, 'the address B still counts its own 3 failures');
});

test('failures are forgotten after the window', (t) => {
  const { th, advance } = throttle();
  for (let i = 0; i < 3; i++) th.failed('alice', 'A');
  t.is(th.waitSeconds('alice', 'A'), 30);
  advance(30 + 899);
  t.is(th.waitSeconds('alice', 'A'), 0, 'the wait is over, the failures still remembered');
  advance(1);
  th.failed('alice', 'A');
  t.is(th.waitSeconds('alice', 'A'), 0, 'counting starts afresh');
});
