/**
 * The hostile probe's system (issue 24): one docker-compose.yml declaring `services` services,
 * each naming another in an environment URL and in `depends_on`. At 10,000 services it is about
 * the probe's 1.8 MB file (1.9 MB: under MAX_STORED_FILE_BYTES, so an audit reads it). The
 * dependency chain `svcN -> svcN+1` closes into one cycle through
 * every service, so anything that walks dependencies recursively sees a path as deep as the file
 * is long; the URL names a service further away (`url target`), so calls do not mirror the chain.
 */

/** Name of service `i` (fixed width, so names sort in index order). */
export function largeServiceName(i: number): string {
  return `svc${String(i).padStart(5, '0')}`;
}

/** The service service `i` depends on (`depends_on`). */
export function dependsTarget(i: number, services: number): number {
  return (i + 1) % services;
}

/** The service service `i` names in its `UPSTREAM_URL`. */
export function urlTarget(i: number, services: number): number {
  return (i * 7 + 3) % services;
}

/** The compose file's text. */
export function largeComposeText(services: number): string {
  const lines: string[] = ['services:'];
  for (let i = 0; i < services; i++) {
    const name = largeServiceName(i);
    lines.push(
      `  ${name}:`,
      `    image: ${name}:1.0.${i % 10}`,
      `    environment:`,
      `      UPSTREAM_URL: http://${largeServiceName(urlTarget(i, services))}:8080/api/v1`,
      `      LOG_LEVEL: info`,
      `    ports:`,
      `      - "${10000 + (i % 50000)}:8080"`,
      `    depends_on:`,
      `      - ${largeServiceName(dependsTarget(i, services))}`,
    );
  }
  return lines.join('\n') + '\n';
}
