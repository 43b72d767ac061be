/** Live processes, read from /proc: what tests check was left behind. */
import fs from 'node:fs';
import crypto from 'node:crypto';
import net from 'node:net';

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

/** The kernel's range for ephemeral ports (listen(0) and outgoing connections), or Linux's default. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux
  }
  return [32768, 60999];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port that no outgoing connection will take meanwhile: one below the ephemeral range,
 * for a port a test hands to a process that listens on it only later.
 */
export async function portOutsideEphemeralRange(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = 10_000;
  const top = low > floor + 1000 ? low : 30_000;
  for (let tries = 0; tries < 200; tries++) {
    const port = floor + crypto.randomInt(top - floor);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port below the ephemeral range');
}
