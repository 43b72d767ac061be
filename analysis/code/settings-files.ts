/**
 * Settings files of a program, known by name: `config.yml`, `config.example.json`,
 * `settings.toml` (domain/audits/classify.ts reads them as code) and Python settings modules
 * (`settings.py`, `sentry.conf.py`). Which program reads one is what a container is given
 * (analysis/reconcile-mounted.ts), not the folder it lies in; one no code unit holds is read
 * under a stand-in subject of its own.
 */
import { basename, dirname } from '../shared/paths';
import type { Unit } from './model';

const PROGRAM_SETTINGS = /^(config|settings)([-.][\w.-]+)?\.(ya?ml|json|toml)$/i;
const PYTHON_SETTINGS = /(^|[._-])(settings|config|conf)([._-][\w.-]*)?\.py$/i;

/** A program's settings file by its name (`config.yml`, `settings.example.json`). */
export function isProgramSettings(path: string): boolean {
  return PROGRAM_SETTINGS.test(basename(path));
}

/**
 * A Grafana Alloy configuration file (Alloy docs, "Alloy configuration syntax": files written in
 * it use the `.alloy` extension; Grafana Agent Flow's predecessor syntax, River, used `.river`).
 * It configures the Alloy container given it: its exporters' and writers' endpoints are the
 * servers that container sends to (analysis/code/alloy-config.ts).
 */
export function isAlloyConfig(path: string): boolean {
  return /\.(alloy|river)$/i.test(path);
}

/** A program's settings file or a Python settings module, by name. */
export function isSettingsFile(path: string): boolean {
  return isProgramSettings(path) || isAlloyConfig(path) || PYTHON_SETTINGS.test(basename(path));
}

/** The start of an XML document whose root element is a ClickHouse server configuration's. */
const CLICKHOUSE_CONFIG_HEAD =
  /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:clickhouse|yandex)[\s>/]/;

/**
 * A ClickHouse server configuration file (ClickHouse docs, "Configuration Files": `config.xml`
 * and `config.d/*.xml`, root element `<clickhouse>`, `<yandex>` before 21.x), by its head. It is
 * the settings of the ClickHouse container given it (analysis/code/clickhouse.ts), wherever it
 * lies (a developer environment's `.devenv/` folder included).
 */
export function isClickHouseServerConfig(path: string, head: string | undefined): boolean {
  return head !== undefined && /\.xml$/i.test(path) && CLICKHOUSE_CONFIG_HEAD.test(head);
}

/** YAML or JSON (the files classify.ts reads a head of): read as mounted settings by any name. */
const MOUNTABLE_FORMAT = /\.(ya?ml|json)$/i;
/**
 * A URL whose host is one DNS label (`http://mimir:9009`, `"url": "http://tempo:4317"`): the
 * address of a sibling container (compose service names are such labels). Linear: the host is
 * one bounded run of label characters, then a port, path or quote must follow.
 */
const SINGLE_LABEL_URL =
  /\b[a-z][a-z0-9+.-]{0,15}:\/\/(?!localhost\b)[a-z][a-z0-9_-]{0,62}(?=[:/"'\s]|$)/im;
/**
 * The `server:` block of a Grafana dskit server's configuration file (the Loki, Tempo, Mimir and
 * Pyroscope configuration references: a top-level `server:` block with `http_listen_port`).
 */
const DSKIT_SERVER =
  /^server:[ \t]*(#[^\n]*)?\r?\n(?:[ \t][^\n]*\n|\n){0,20}?[ \t]+http_listen_port:/m;

/**
 * A settings file known only by its content, read only for a container given that very file
 * (analysis/reconcile-mounted.ts): a YAML or JSON file whose head names a sibling
 * container by URL, or a Grafana dskit server's configuration. `head` is the file's start
 * (domain/audits/classify.ts `headBytes`); the caller has ruled out every other reading.
 */
export function isMountedOnlySettings(path: string, head: string | undefined): boolean {
  if (head === undefined || !MOUNTABLE_FORMAT.test(path)) return false;
  return SINGLE_LABEL_URL.test(head) || DSKIT_SERVER.test(head);
}

/**
 * A Grafana provisioning file of data sources (Grafana docs, "Provisioning" > "Data sources": a
 * YAML file with `apiVersion: 1` and a top-level `datasources:` list, each entry's `url` the
 * server Grafana queries). It is the settings of the Grafana container given it (a mounted
 * `provisioning/datasources` folder), whatever its file name; read by content.
 */
export function isGrafanaDatasources(path: string, text: string): boolean {
  return (
    /\.ya?ml$/i.test(path) &&
    /^apiVersion:\s*['"]?1['"]?\s*$/m.test(text) &&
    /^datasources:\s*$/m.test(text)
  );
}

/** A settings file by name, or by content (a Grafana data source provisioning file). */
export function isSettingsSource(path: string, text: string): boolean {
  return isSettingsFile(path) || isGrafanaDatasources(path, text);
}

/** The stand-in unit a settings file outside every unit is read under (`settings:`, no entity kind). */
export function settingsSubject(path: string): Unit {
  return {
    key: `settings:${path}`,
    name: path,
    dir: dirname(path),
    manifestName: null,
    manifests: [],
    dockerfiles: [],
    lockfiles: [],
    ecosystems: [],
    aliases: [],
    npmName: null,
    goModule: null,
    pythonNames: [],
    workspaceRootDir: null,
    citation: { path, line: 1, provider: 'settings' },
  };
}
