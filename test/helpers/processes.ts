/** Live processes, read from /proc: what tests check was left behind. */
import fs from 'node:fs';

/** Processes (other than this one) whose command line contains `needle`, as `<pid>: <cmdline>`. */
export function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}
