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

/** A program's settings file or a Python settings module, by name. */
export function isSettingsFile(path: string): boolean {
  return isProgramSettings(path) || PYTHON_SETTINGS.test(basename(path));
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
